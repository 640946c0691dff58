// The source revision recorded on rendered objects: the git HEAD of the repository holding the path (the one I/O of
// rendering, kept apart).
import fs from "node:fs";
import git from "isomorphic-git";
import { headCommit } from "../git/log.js";

/** Revision of a path when none is given and the path is not in a git repository. */
const UNKNOWN_REVISION = "unknown";

/** The commit HEAD points to in the git repository holding `path` (also from a subfolder), else `unknown`. */
export async function sourceRevision(path: string): Promise<string> {
  let top: string;
  try {
    top = await git.findRoot({ fs, filepath: path });
  } catch {
    return UNKNOWN_REVISION;
  }
  return (await headCommit(top)) ?? UNKNOWN_REVISION;
}
