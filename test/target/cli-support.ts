// Runs `vc` in-process with stdout and stderr captured (shared by the diff and apply CLI tests).
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { main } from "../../src/cli/main.js";

export async function runVc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const ow = process.stdout.write;
  const ew = process.stderr.write;
  const prev = process.exitCode;
  process.stdout.write = ((c: string | Uint8Array) => (out.push(String(c)), true)) as typeof ow;
  process.stderr.write = ((c: string | Uint8Array) => (err.push(String(c)), true)) as typeof ew;
  try {
    process.exitCode = undefined;
    const code = await main(args);
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = ow;
    process.stderr.write = ew;
    process.exitCode = prev;
  }
}

/** A temporary repository holding copies of example clusters (by name) and any extra files. */
export function exampleRepo(clusters: string[], files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "vc-cli-repo-"));
  for (const c of clusters) cpSync(join(import.meta.dirname, "..", "..", "clusters", c), join(root, "clusters", c), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}
