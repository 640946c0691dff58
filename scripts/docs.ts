// `npm run docs`: writes the generated files (docs/values-reference.md, docs/cli-reference.md, the doctor tables of
// README.md and docs/troubleshooting.md, deploy/ci/readonly-rbac.yaml); `--check` only compares.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { generatedDocs } from "./docs/generate.js";

const root = join(import.meta.dirname, "..");
const check = process.argv.includes("--check");
let stale = 0;
for (const [path, text] of await generatedDocs(root)) {
  const file = join(root, path);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (current === text) continue;
  if (check) {
    process.stderr.write(`${path} is stale: run npm run docs\n`);
    stale++;
  } else {
    writeFileSync(file, text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
