// The generated files (references, vc doctor's check tables, the CI reader's RBAC): path (relative to the project root)
// -> content. Deterministic for a given tree.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ciReaderManifests } from "../../src/init/ci-reader.js";
import { buildProgram } from "../../src/cli/main.js";
import { buildCommand } from "../../src/metrics-proxy/config.js";
import { cliReference } from "./cli-reference.js";
import { readmeDoctorTable, replaceRegion, troubleshootingTables } from "./doctor-checks.js";
import { valuesReference } from "./values-reference.js";

export async function generatedDocs(root: string): Promise<Map<string, string>> {
  return new Map([
    ["docs/values-reference.md", valuesReference(join(root, "schemas"))],
    ["docs/cli-reference.md", cliReference(await buildProgram(), buildCommand())],
    // The read-only identity for VC_KUBECONFIG of the plan and drift workflows: the reconciler's kinds, read verbs
    // only. The tables of vc doctor's checks, from src/ops/doctor/coverage.ts, in the regions marked in these pages.
    ["README.md", replaceRegion(readFileSync(join(root, "README.md"), "utf8"), "doctor-checks", readmeDoctorTable())],
    [
      "docs/troubleshooting.md",
      replaceRegion(
        readFileSync(join(root, "docs/troubleshooting.md"), "utf8"),
        "doctor-checks",
        troubleshootingTables(),
      ),
    ],
    [
      "deploy/ci/readonly-rbac.yaml",
      ciReaderManifests(readFileSync(join(root, "deploy/reconciler/rbac.yaml"), "utf8"), "vc-system"),
    ],
  ]);
}
