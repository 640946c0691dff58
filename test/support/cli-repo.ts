// Support of the diff and apply CLI tests: the in-process `vc` runner and temporary example repositories.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
export { runVc } from "./vc.js";

/** A temporary repository holding copies of example clusters (by name) and any extra files. */
export function exampleRepo(clusters: string[], files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "vc-cli-repo-"));
  for (const c of clusters)
    cpSync(join(import.meta.dirname, "..", "..", "clusters", c), join(root, "clusters", c), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}
