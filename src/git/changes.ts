// The paths that differ between two commits: both trees read level by level, identical subtrees skipped by oid.
import fs from "node:fs";
import git, { type TreeEntry } from "isomorphic-git";

export interface ChangedPathsOptions {
  /** Git directory or work tree containing `.git`. */
  dir: string;
  from: string;
  to: string;
  cache?: object;
}

/**
 * Repository-relative file paths added, removed or modified between `from` and `to`, sorted. Only trees
 * whose oid differs are read, so a commit touching one cluster of 1,000 reads a handful of tree objects
 * (git.walk reads every child folder before it can skip it).
 */
export async function changedPaths(opts: ChangedPathsOptions): Promise<string[]> {
  const cache = opts.cache ?? {};
  const out: string[] = [];
  const read = async (oid: string | undefined): Promise<TreeEntry[]> =>
    oid ? (await git.readTree({ fs, dir: opts.dir, oid, cache })).tree : [];
  const diff = async (a: string | undefined, b: string | undefined, prefix: string): Promise<void> => {
    const [ta, tb] = await Promise.all([read(a), read(b)]);
    const byName = new Map<string, [TreeEntry | undefined, TreeEntry | undefined]>();
    for (const e of ta) byName.set(e.path, [e, undefined]);
    for (const e of tb) byName.set(e.path, [byName.get(e.path)?.[0], e]);
    for (const [name, [x, y]] of byName) {
      if (x && y && x.oid === y.oid && x.mode === y.mode) continue;
      const path = `${prefix}${name}`;
      const xTree = x?.type === "tree";
      const yTree = y?.type === "tree";
      if (xTree || yTree) await diff(xTree ? x.oid : undefined, yTree ? y.oid : undefined, `${path}/`);
      if ((x && !xTree) || (y && !yTree)) out.push(path);
    }
  };
  await diff(opts.from, opts.to, "");
  return [...new Set(out)].sort();
}
