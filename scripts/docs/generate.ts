// The generated documentation files: path (relative to the project root) -> content. Deterministic for a given tree.
import { join } from "node:path";
import { buildProgram } from "../../src/cli/main.js";
import { buildCommand } from "../../src/metrics-proxy/config.js";
import { cliReference } from "./cli-reference.js";
import { valuesReference } from "./values-reference.js";

export async function generatedDocs(root: string): Promise<Map<string, string>> {
  return new Map([
    ["docs/values-reference.md", valuesReference(join(root, "schemas"))],
    ["docs/cli-reference.md", cliReference(await buildProgram(), buildCommand())],
  ]);
}
