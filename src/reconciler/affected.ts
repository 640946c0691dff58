// Which clusters a set of changed repository paths affects: the heart of incremental reconciliation (pure).
import { isBaseFile } from "../repo/fleet-base.js";

/** The folder holding one sub-folder per virtual cluster, repository-relative. */
export const CLUSTERS_DIR = "clusters";

/**
 * Maps changed paths to the clusters whose folder they are in, sorted. A change to a fleet base file
 * (fleet/values.yaml, fleet/values.<group>.yaml, fleet/groups.yaml) reaches the clusters `reach` names for it
 * (none without `reach`). Other paths outside `clusters/<name>/` touch none, and files directly in `clusters/`
 * or in dot-folders are ignored by the loader.
 */
export function affectedClusters(
  paths: Iterable<string>,
  clustersDir = CLUSTERS_DIR,
  reach?: (baseFile: string) => readonly string[],
): string[] {
  const prefix = `${clustersDir}/`;
  const names = new Set<string>();
  for (const raw of paths) {
    const path = raw.replace(/\\/g, "/").replace(/^\.\//, "");
    if (reach && isBaseFile(path)) {
      for (const n of reach(path)) names.add(n);
      continue;
    }
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash <= 0 || rest.startsWith(".")) continue;
    names.add(rest.slice(0, slash));
  }
  return [...names].sort();
}
