// Which clusters a set of changed repository paths affects: the heart of incremental reconciliation (pure).

/** The folder holding one sub-folder per virtual cluster, repository-relative. */
export const CLUSTERS_DIR = "clusters";

/**
 * Maps changed paths to the clusters whose folder they are in, sorted. Paths outside `clusters/<name>/`
 * touch none: a cluster is read only from its own folder, and files directly in `clusters/` or in
 * dot-folders are ignored by the loader.
 */
export function affectedClusters(paths: Iterable<string>, clustersDir = CLUSTERS_DIR): string[] {
  const prefix = `${clustersDir}/`;
  const names = new Set<string>();
  for (const raw of paths) {
    const path = raw.replace(/\\/g, "/").replace(/^\.\//, "");
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash <= 0 || rest.startsWith(".")) continue;
    names.add(rest.slice(0, slash));
  }
  return [...names].sort();
}
