// The words every command says about a folder that is not a fleet repository, or a fleet with no cluster yet.
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

/** The error of validate, render, diff and apply for a path with no clusters/ at or above it (the same words). */
export function noClustersMessage(path: string): string {
  return (
    `no clusters/ folder in ${resolve(path)} or any folder above it: vc reads a fleet repository, one folder ` +
    "clusters/<name>/ per virtual cluster; give its path, or start one with vc init"
  );
}

/** A note when the fleet's clusters/ holds no cluster folder (files such as .gitkeep aside); undefined otherwise. */
export function emptyClustersNote(root: string): string | undefined {
  const dir = join(root, "clusters");
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  if (entries.some((e) => e.isDirectory())) return undefined;
  return `note: ${dir} is empty: add one folder clusters/<name>/ per virtual cluster (vc init writes an example)`;
}
