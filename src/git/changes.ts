// The paths that differ between two commits, found by walking both trees and skipping identical subtrees.
import fs from "node:fs";
import git, { TREE } from "isomorphic-git";

export interface ChangedPathsOptions {
  /** Git directory or work tree containing `.git`. */
  dir: string;
  from: string;
  to: string;
  cache?: object;
}

/** Repository-relative file paths added, removed or modified between `from` and `to`, sorted. */
export async function changedPaths(opts: ChangedPathsOptions): Promise<string[]> {
  const changed: string[] = [];
  await git.walk({
    fs,
    dir: opts.dir,
    cache: opts.cache ?? {},
    trees: [TREE({ ref: opts.from }), TREE({ ref: opts.to })],
    map: async (path, entries) => {
      const [a, b] = entries;
      if (path === ".") return true;
      const [oidA, oidB] = await Promise.all([a?.oid(), b?.oid()]);
      if (oidA === oidB) return null; // identical file or subtree: do not descend
      const [typeA, typeB] = await Promise.all([a?.type(), b?.type()]);
      if (typeA === "blob" || typeB === "blob") changed.push(path);
      return true;
    },
  });
  return changed.sort();
}
