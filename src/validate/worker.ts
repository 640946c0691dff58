// The worker thread of the validation pool: claims cluster folders from the shared counter, validates them and posts
// each result back.
import { parentPort } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import { validateFolder } from "./folder.js";
import type { ClusterResult } from "./result.js";
import type { ClusterFiles } from "../repo/layout.js";
import type { LoadedPolicy } from "./policy.js";
import type { ValidatedFolder } from "./digest.js";

export interface WorkRequest {
  realRoot: string;
  /**
   * Every folder of the run, in the order they are claimed (largest first), with the files the pool listed (absent
   * where listing failed).
   */
  folders: Array<{ name: string; files?: ClusterFiles }>;
  /** One Int32 shared by every thread of the run: the index of the next folder to claim (Atomics.add). */
  claims: SharedArrayBuffer;
  cacheDir?: string;
  detail: Detail;
  /** The repository's fleet policy, when it has one. */
  policy?: LoadedPolicy;
  /** Clusters pinned by a rollout: the folder of each one's base snapshot. */
  bases?: Readonly<Record<string, string>>;
  /** The shared inputs' digest and what the records kept of the folders (pool.ts PoolOptions.known). */
  known?: { shared: string; validated: Readonly<Record<string, ValidatedFolder>> };
}

/**
 * A folder's result (by its index in `folders`), or the end of this worker's share once its cache entries are written.
 */
export type WorkMessage = { index: number; result: ClusterResult } | { done: true };

parentPort?.on("message", async (req: WorkRequest) => {
  const claims = new Int32Array(req.claims);
  const opened = req.cacheDir === undefined ? undefined : DirCache.open(req.cacheDir);
  const cache = opened && "cache" in opened ? opened.cache : undefined;
  for (let i = Atomics.add(claims, 0, 1); i < req.folders.length; i = Atomics.add(claims, 0, 1)) {
    const f = req.folders[i]!;
    const known = req.known && { shared: req.known.shared, validated: req.known.validated[f.name] };
    const result = validateFolder(
      req.realRoot,
      f.name,
      cache,
      req.detail,
      req.policy,
      f.files,
      req.bases?.[f.name],
      known,
    );
    parentPort!.postMessage({ index: i, result } satisfies WorkMessage);
  }
  await cache?.flush(); // the entries are on disk before the caller hears back (and may exit)
  parentPort!.postMessage({ done: true } satisfies WorkMessage);
});
// Loaded: the pool hands out work only now, so that folders are never held by a worker still starting.
parentPort?.postMessage("ready");
