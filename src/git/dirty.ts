// The revision vc records for a local fleet: HEAD, marked `-dirty` when what vc reads (clusters/, policy.yaml, the fleet/ bases) differs from it.
import fs from "node:fs";
import { relative, sep } from "node:path";
import git from "isomorphic-git";

/** Appended to a commit SHA when the work tree vc read differed from that commit (as `git describe --dirty` does). */
const DIRTY_SUFFIX = "-dirty";

/** The paths under the fleet's folder that vc reads: the work tree differs from HEAD when one of them does. */
const READ_PATHS = ["clusters", "policy.yaml", "fleet"];

/**
 * Whether the files vc reads from the fleet at `root` (its clusters/ folder, policy.yaml and the fleet/ bases) differ from the commit
 * HEAD points to: a tracked file changed, staged or deleted, or a file git does not ignore added. False outside git.
 */
export async function fleetDiffersFromHead(root: string): Promise<boolean> {
  let top: string;
  try {
    top = await git.findRoot({ fs, filepath: root });
  } catch {
    return false;
  }
  const prefix = relative(top, root).split(sep).join("/");
  const filepaths = READ_PATHS.map((p) => (prefix ? `${prefix}/${p}` : p));
  let rows: Array<[string, number, number, number]>;
  try {
    rows = await git.statusMatrix({ fs, dir: top, filepaths });
  } catch {
    return false; // a repository without commits has no HEAD to differ from
  }
  // [path, HEAD, work tree, index]: 1/1/1 is unmodified; anything else (new, changed, staged, deleted) differs.
  return rows.some(([, head, workdir, stage]) => !(head === 1 && workdir === 1 && stage === 1));
}

/** `sha` marked dirty. */
export function dirtyRevision(sha: string): string {
  return `${sha}${DIRTY_SUFFIX}`;
}

/** The commit of a recorded revision (without the dirty marker). */
export function commitOf(revision: string): string {
  return revision.endsWith(DIRTY_SUFFIX) ? revision.slice(0, -DIRTY_SUFFIX.length) : revision;
}

/** A revision as shown in tables: 12 characters of the commit, with the dirty marker kept; "-" when there is none. */
export function shortRevision(revision: string | undefined): string {
  if (!revision) return "-";
  const commit = commitOf(revision);
  return `${commit.slice(0, 12)}${commit === revision ? "" : DIRTY_SUFFIX}`;
}
