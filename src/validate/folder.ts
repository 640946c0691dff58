// One cluster folder from the cache when its content is known, else validated (and stored), then held to the fleet policy; a failure stays that folder's own.
import { CLUSTERS_DIR, listClusterFiles, type ClusterFiles } from "../repo/layout.js";
import { folderBudget, readWithinBudget } from "../repo/budget.js";
import { clusterKey, type Detail, type ValidationCache } from "./cache.js";
import { validateCluster } from "./cluster.js";
import type { ClusterResult } from "./result.js";
import { fileDiagnostic } from "./finding.js";
import { enforcePolicy, type LoadedPolicy } from "./policy.js";
import { baseLayers, labelsChooseLayers, peekLabels } from "../repo/fleet-base.js";
import { brokenGroupsDiagnostic, loadFleetBase } from "./fleet-base.js";
import { markPinned } from "./pinned.js";

/**
 * `policy`: the loaded fleet policy, when the repository has one. The cache holds results before the policy
 * (its key is the folder's content only); the policy is applied to every result, cached or not. `listed`: the
 * folder's files when the caller listed them already (the pool does, to hand out the largest folders first).
 * `baseRoot`: the folder of the base snapshot a rollout pins the cluster to (its fleet/ layers), when not the repository's.
 */
export function validateFolder(
  realRoot: string,
  name: string,
  cache: ValidationCache | undefined,
  detail: Detail,
  policy?: LoadedPolicy,
  listed?: ClusterFiles,
  baseRoot?: string,
): ClusterResult {
  try {
    const budget = folderBudget(policy?.policy?.folderBudget);
    const own = listed ?? listClusterFiles(realRoot, name, budget.files);
    // The fleet's base layers come first (fleet/values.yaml, then the groups its labels select), as values files of the
    // folder: read within its budget, part of its cache key, merged by the same rules, errors located in the base file.
    // A cluster pinned by a rollout takes its base layers (and groups) from the snapshot's folder (src/validate/pinned.ts).
    const fleet = loadFleetBase(baseRoot ?? realRoot);
    // cluster.yaml is read (and parsed) for its labels only when they can choose a group's layers: a fleet without
    // group values files reads it once, with the folder's other files.
    const bases = baseLayers(fleet.base, labelsChooseLayers(fleet.base) ? peekLabels(realRoot, own.clusterFile) : {});
    const files = bases.length > 0 ? { ...own, values: [...bases, ...own.values] } : own;
    const held = (r: ClusterResult): ClusterResult => {
      if (fleet.broken) {
        r.diagnostics.push(brokenGroupsDiagnostic(r.dir));
        delete r.spec;
        r.valid = false;
      }
      if (policy) enforcePolicy(realRoot, r, policy);
      if (baseRoot !== undefined) markPinned(r, baseRoot);
      return trim(r, detail);
    };
    // The folder's files and bytes are within its budget before anything is parsed (its objects are counted as parsed).
    const read = readWithinBudget(realRoot, files, budget, baseRoot);
    if (!read.ok) return { name, dir: files.dir, valid: false, diagnostics: [...files.diagnostics, read.diagnostic] };
    const reads = read.reads;
    if (!cache) return held(validateCluster(realRoot, files, reads, budget));
    const key = clusterKey(files, reads, budget);
    // The policy needs the spec: a summary is asked of the cache only when there is no policy to apply.
    const hit = cache.get(key, policy ? "full" : detail);
    if (hit) return held(hit);
    const result = validateCluster(realRoot, files, reads, budget);
    cache.set(key, result);
    return held(policy ? structuredClone(result) : result); // the cache keeps what the folder says, not the policy
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
