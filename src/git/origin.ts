// Where a local fleet comes from: the git repository holding it, its origin remote and the folder of clusters/ within
// it (for the default owner name).
import fs from "node:fs";
import { relative, sep } from "node:path";
import git from "isomorphic-git";

export interface FleetLocation {
  /** The origin remote URL, else `file:<the repository's folder>` (or the fleet's folder outside git). */
  repo: string;
  /** The folder holding clusters/, relative to the repository's root (`/`-separated; "" at the root). */
  subdir: string;
}

/** The location of the fleet whose clusters/ folder is in `root`. */
export async function fleetLocation(root: string): Promise<FleetLocation> {
  let top: string;
  try {
    top = await git.findRoot({ fs, filepath: root });
  } catch {
    return { repo: `file:${root}`, subdir: "" };
  }
  const subdir = relative(top, root).split(sep).join("/");
  try {
    const url = (await git.getConfig({ fs, dir: top, path: "remote.origin.url" })) as string | undefined;
    if (url) return { repo: url, subdir };
  } catch {
    // no readable config: the folder names the fleet
  }
  return { repo: `file:${top}`, subdir };
}
