// Validates many cluster folders on every core: the calling thread and worker threads (one per further core) claim them one by one, largest first.
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import type { ClusterResult } from "./cluster.js";
import { listClusterFiles, type ClusterFiles } from "../repo/layout.js";
import { validateFolder } from "./folder.js";
import type { LoadedPolicy } from "./policy.js";
import type { WorkMessage, WorkRequest } from "./worker.js";

/**
 * Below this many cluster folders the work stays on the calling thread (a reconciler pass over a few changed
 * clusters, the example repository). Above it workers are started, but they never hold the work up: this thread
 * starts validating at once, and a worker that is not ready when the work runs out is stopped unused.
 */
export const MIN_CLUSTERS_FOR_WORKERS = 16;

/** Threads to use by default: every core the process may use (an affinity mask such as `taskset -c 0` counts). */
export function defaultJobs(): number {
  return availableParallelism();
}

/** Whether `count` folders with `jobs` threads go to workers. */
export function useWorkers(count: number, jobs: number): boolean {
  return jobs > 1 && count >= MIN_CLUSTERS_FOR_WORKERS;
}

/** A folder to validate: its listing (undefined when listing failed: validateFolder reports it) and its bytes. */
export interface Folder {
  name: string;
  files?: ClusterFiles;
  bytes: number;
}

/**
 * The folders, largest first: a thread that took a large folder last would hold up the end (one cluster of large
 * manifests can be a fifth of a fleet's bytes). Listing them here saves the listing each would otherwise do.
 */
export function largestFirst(realRoot: string, names: readonly string[]): Folder[] {
  const folders = names.map((name): Folder => {
    try {
      const files = listClusterFiles(realRoot, name);
      let bytes = 0;
      for (const rel of [...files.values, ...(files.clusterFile ? [files.clusterFile] : []), ...files.mesh, ...files.certificates]) {
        bytes += statSync(join(realRoot, rel), { throwIfNoEntry: false })?.size ?? 0;
      }
      return { name, files, bytes };
    } catch {
      return { name, bytes: 0 };
    }
  });
  return folders.sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
}

export interface PoolOptions {
  /** Threads in all, this one included. */
  jobs: number;
  detail: Detail;
  cacheDir?: string;
  policy?: LoadedPolicy;
  /** This thread claims no folder before every worker is ready (or failed): tests that must see the workers' share. */
  waitForWorkers?: boolean;
}

export interface PoolResult {
  /** One result per name, in the order of the names. */
  results: ClusterResult[];
  /** Folders validated by worker threads (the rest by this one). */
  byWorkers: number;
}

/**
 * Validates `names` on this thread and `jobs - 1` workers. Every thread claims the next folder (largest first) from one
 * shared counter, so a worker never waits for this thread to hand it work, and the last folders, the smallest, end
 * together. Folders a failed worker claimed but did not answer are validated here.
 */
export async function validateInWorkers(realRoot: string, names: string[], opts: PoolOptions): Promise<PoolResult> {
  const { jobs, detail, cacheDir, policy } = opts;
  // Workers first: they load while this thread lists the folders.
  const url = new URL("../../bin/validate-worker.js", import.meta.url);
  const workers = Array.from({ length: Math.min(jobs - 1, names.length - 1) }, () => new Worker(url));
  const queue = largestFirst(realRoot, names);
  const claims = new Int32Array(new SharedArrayBuffer(4));
  const claim = (): number => Atomics.add(claims, 0, 1);
  const results: Array<ClusterResult | undefined> = new Array(queue.length);
  let byWorkers = 0;
  let hereDone!: () => void;
  const allClaimed = new Promise<"done">((resolve) => (hereDone = () => resolve("done")));
  const readiness: Promise<boolean>[] = [];
  const validate = (i: number, cache: DirCache | undefined): void => {
    const f = queue[i]!;
    results[i] = validateFolder(realRoot, f.name, cache, detail, policy, f.files);
  };

  const folders = queue.map((f) => ({ name: f.name, files: f.files }));
  // Each worker is kept referenced: while this thread waits for its answers, the worker is what keeps the process alive.
  const run = async (worker: Worker): Promise<void> => {
    const ready = readyOf(worker);
    readiness.push(ready);
    worker.on("error", () => undefined); // what it claimed is validated here; never an uncaught error
    let answered = false;
    const finished = new Promise<void>((resolve) => {
      const finish = (): void => {
        worker.off("message", onMessage);
        worker.off("error", finish);
        worker.off("exit", finish);
        resolve();
      };
      const onMessage = (m: WorkMessage | "ready"): void => {
        if (m === "ready") return;
        if ("done" in m) return finish();
        answered = true;
        results[m.index] = m.result;
        byWorkers++;
      };
      worker.on("message", onMessage);
      worker.on("error", finish); // a failed worker claims nothing more
      worker.on("exit", finish);
    });
    // Sent at once: the worker starts claiming as soon as it has loaded, without waiting for this (busy) thread.
    worker.postMessage({ realRoot, folders, claims: claims.buffer as SharedArrayBuffer, cacheDir, detail, policy } satisfies WorkRequest);
    try {
      // Work that ran out before the worker was ready is not waited for: the worker is stopped (what it may have
      // claimed meanwhile is validated here).
      if ((await Promise.race([ready, allClaimed])) !== true && !answered) return;
      await finished;
    } finally {
      await worker.terminate();
    }
  };
  const here = async (): Promise<void> => {
    if (opts.waitForWorkers) await Promise.all(readiness);
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    for (let i = claim(); i < queue.length; i = claim()) {
      validate(i, cache);
      await new Promise((r) => setImmediate(r)); // let the workers' answers (and timers, sockets) in
    }
    hereDone();
    await cache?.flush();
  };
  await Promise.all([...workers.map(run), here()]);

  // What a failed worker claimed and never answered.
  const missing = results.flatMap((r, i) => (r === undefined ? [i] : []));
  if (missing.length > 0) {
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    for (const i of missing) validate(i, cache);
    await cache?.flush();
  }
  const byName = new Map(queue.map((f, i) => [f.name, results[i]!]));
  return { results: names.map((n) => byName.get(n)!), byWorkers };
}

/** Whether the worker loaded (it says "ready"); false when it failed to start. */
function readyOf(worker: Worker): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      worker.off("message", onMessage);
      worker.off("error", onFail);
      worker.off("exit", onFail);
      resolve(ok);
    };
    const onMessage = (m: unknown): void => done(m === "ready");
    const onFail = (): void => done(false);
    worker.on("message", onMessage);
    worker.on("error", onFail);
    worker.on("exit", onFail);
  });
}
