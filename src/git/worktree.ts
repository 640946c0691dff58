// Writes a commit's files to a plain folder: everything once, then only the paths a new commit changed (no index, no
// full-tree scan).
import fs from "node:fs";
import { mkdir, readdir, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import git, { TREE } from "isomorphic-git";

export interface MaterializeOptions {
  /** Folder holding `.git`; files are written beside it. */
  dir: string;
  commit: string;
  cache?: object;
}

/** Replaces every file of the folder (but `.git`) with the commit's tree. Returns the number of files written. */
export async function materializeAll(opts: MaterializeOptions): Promise<number> {
  for (const entry of await readdir(opts.dir)) {
    if (entry !== ".git") await rm(join(opts.dir, entry), { recursive: true, force: true });
  }
  let files = 0;
  const made = new Set<string>();
  await git.walk({
    fs,
    dir: opts.dir,
    cache: opts.cache ?? {},
    trees: [TREE({ ref: opts.commit })],
    map: async (path, [entry]) => {
      if (!entry || path === ".") return true;
      const type = await entry.type();
      if (type !== "blob") return true;
      const content = await entry.content();
      const target = join(opts.dir, path);
      const parent = dirname(target);
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true });
        made.add(parent);
      }
      await writeFile(target, content ?? new Uint8Array());
      files++;
      return null;
    },
  });
  return files;
}

/** Brings the folder from one commit to the next by writing or removing only `paths` (from changedPaths). */
export async function materializePaths(opts: MaterializeOptions & { paths: readonly string[] }): Promise<void> {
  for (const path of opts.paths) {
    const target = join(opts.dir, path);
    let blob: Uint8Array | undefined;
    try {
      blob = (await git.readBlob({ fs, dir: opts.dir, oid: opts.commit, filepath: path, cache: opts.cache ?? {} }))
        .blob;
    } catch (err) {
      if ((err as { code?: string }).code !== "NotFoundError") throw err;
    }
    if (blob) {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, blob);
    } else {
      await rm(target, { force: true });
      await removeEmptyParents(opts.dir, dirname(target));
    }
  }
}

async function removeEmptyParents(root: string, dir: string): Promise<void> {
  while (dir.length > root.length && dir.startsWith(root)) {
    try {
      await rmdir(dir);
    } catch {
      return; // not empty (or gone)
    }
    dir = dirname(dir);
  }
}
