// Which clusters a set of changed repository paths affects: the heart of incremental reconciliation (pure).

/** The folder holding one sub-folder per virtual cluster, repository-relative. */
export const CLUSTERS_DIR = "clusters";

export interface Affected {
  /** Clusters whose folder has a changed path, sorted. */
  clusters: string[];
  /** A changed file sits directly in `clusters/` (shared by every cluster): everything must be reconciled. */
  all: boolean;
}

/** Maps changed paths to the clusters they touch; paths outside `clusters/` touch none. */
export function affectedClusters(paths: Iterable<string>, clustersDir = CLUSTERS_DIR): Affected {
  const prefix = `${clustersDir}/`;
  const names = new Set<string>();
  let all = false;
  for (const raw of paths) {
    const path = raw.replace(/\\/g, "/").replace(/^\.\//, "");
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash < 0) {
      if (!rest.startsWith(".")) all = true; // a shared file in clusters/ (dotfiles such as .gitkeep excepted)
      continue;
    }
    names.add(rest.slice(0, slash));
  }
  return { clusters: [...names].sort(), all };
}
