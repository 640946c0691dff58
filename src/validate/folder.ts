// One cluster folder from the cache when its content is known, else validated (and stored); a failure stays that folder's own.
import { CLUSTERS_DIR, listClusterFiles } from "../repo/layout.js";
import { readRepoFile, type ReadResult } from "../repo/read.js";
import { clusterKey, type Detail, type ValidationCache } from "./cache.js";
import { validateCluster, type ClusterResult } from "./cluster.js";
import { fileDiagnostic } from "./finding.js";

export function validateFolder(realRoot: string, name: string, cache: ValidationCache | undefined, detail: Detail): ClusterResult {
  try {
    const files = listClusterFiles(realRoot, name);
    if (!cache) return trim(validateCluster(realRoot, files), detail);
    const reads = new Map<string, ReadResult>();
    for (const file of [...files.values, ...(files.clusterFile ? [files.clusterFile] : []), ...files.mesh]) reads.set(file, readRepoFile(realRoot, file));
    const key = clusterKey(files, reads);
    const hit = cache.get(key, detail);
    if (hit) return hit;
    const result = validateCluster(realRoot, files, reads);
    cache.set(key, result);
    return trim(result, detail);
  } catch (err) {
    // An unexpected failure (a bug, a file no limit foresaw) makes this cluster invalid with its own error, never the whole run.
    const dir = `${CLUSTERS_DIR}/${name}`;
    const message = `cannot validate this cluster folder: ${err instanceof Error ? err.message : String(err)}`;
    return { name, dir, valid: false, diagnostics: [fileDiagnostic(dir, "error", "internal", message)] };
  }
}

/** A summary drops what only render and apply need (cheaper to copy out of a worker). */
function trim(result: ClusterResult, detail: Detail): ClusterResult {
  if (detail === "full") return result;
  const { spec: _spec, values: _values, ...summary } = result;
  return summary;
}
