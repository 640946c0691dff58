// The worker thread of the validation pool: validates the cluster folders it is sent and posts the results back.
import { parentPort } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import { validateFolder } from "./folder.js";
import type { ClusterResult } from "./cluster.js";
import type { LoadedPolicy } from "./policy.js";

export interface WorkRequest {
  /** Echoed in the answer: several requests may be in flight, and an answer may overtake an earlier one. */
  id: number;
  realRoot: string;
  names: string[];
  cacheDir?: string;
  detail: Detail;
  /** The repository's fleet policy, when it has one. */
  policy?: LoadedPolicy;
}

export interface WorkAnswer {
  id: number;
  results: ClusterResult[];
}

const caches = new Map<string, DirCache>();

parentPort?.on("message", async (req: WorkRequest) => {
  const cache = req.cacheDir === undefined ? undefined : (caches.get(req.cacheDir) ?? caches.set(req.cacheDir, new DirCache(req.cacheDir)).get(req.cacheDir));
  const results = req.names.map((name) => validateFolder(req.realRoot, name, cache, req.detail, req.policy));
  await cache?.flush(); // the entries are on disk before the caller hears back (and may exit)
  parentPort!.postMessage({ id: req.id, results } satisfies WorkAnswer);
});
// Loaded: the pool hands out work only now, so that folders are never held by a worker still starting.
parentPort?.postMessage("ready");
