// One cluster folder from the cache when its content is known, else validated (and stored), then held to the fleet
// policy; a failure stays that folder's own.
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
import { folderDigest, summaryOf, type ValidatedFolder } from "./digest.js";

/** What a folder's validation may take from earlier runs: the record's summary and digest, and the shared inputs. */
export interface Known {
  /** The digest of policy.yaml and the fleet bases (digest.ts sharedInputs): part of every folder's digest. */
  shared: string;
  /** What the cluster's record kept of the folder's last validation, when it has one. */
  validated?: ValidatedFolder;
}

/**
 * `policy`: the loaded fleet policy, when the repository has one. The cache holds results before the policy
 * (its key is the folder's content only); the policy is applied to every result, cached or not. `listed`: the
 * folder's files when the caller listed them already (the pool does, to hand out the largest folders first).
 * `baseRoot`: the folder of the base snapshot a rollout pins the cluster to (its fleet/ layers), when not the
 * repository's. `known`: with it the result carries its digest, and a summary whose digest matches the record's is the
 * record's (validated when it was recorded: the policy applied, valid), not validated again.
 */
export function validateFolder(
  realRoot: string,
  name: string,
  cache: ValidationCache | undefined,
  detail: Detail,
  policy?: LoadedPolicy,
  listed?: ClusterFiles,
  baseRoot?: string,
  known?: Known,
): ClusterResult {
  try {
    const budget = folderBudget(policy?.policy?.folderBudget);
    const own = listed ?? listClusterFiles(realRoot, name, budget.files);
    // The fleet's base layers come first (fleet/values.yaml, then the groups its labels select), as values files of the
    // folder: read within its budget, part of its cache key, merged by the same rules, errors located in the base file.
    // A cluster pinned by a rollout takes its base layers (and groups) from the snapshot's folder
    // (src/validate/pinned.ts).
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
    if (!cache && !known) return held(validateCluster(realRoot, files, reads, budget));
    const key = clusterKey(files, reads, budget);
    const digest = known ? folderDigest(key, known.shared) : undefined;
    const digested = (r: ClusterResult): ClusterResult => (digest === undefined ? r : { ...r, digest });
    if (detail === "summary" && digest !== undefined && known?.validated?.digest === digest)
      return summaryOf(name, files.dir, files.clusterFile, known.validated);
    if (!cache) return digested(held(validateCluster(realRoot, files, reads, budget)));
    // The policy needs the spec: a summary is asked of the cache only when there is no policy to apply.
    const hit = cache.get(key, policy ? "full" : detail);
    if (hit) return digested(held(hit));
    const result = validateCluster(realRoot, files, reads, budget);
    cache.set(key, result);
    // The cache keeps what the folder says, not the policy.
    return digested(held(policy ? structuredClone(result) : result));
  } catch (err) {
    // An unexpected failure (a bug, a file no limit foresaw) makes this cluster invalid with its own error, never the
    // whole run.
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
