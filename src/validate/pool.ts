// Validates many cluster folders on every core: the calling thread and worker threads (one per further core) share them out.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import type { ClusterResult } from "./cluster.js";
import { validateFolder } from "./folder.js";
import type { LoadedPolicy } from "./policy.js";
import type { WorkAnswer, WorkRequest } from "./worker.js";

/**
 * Below this many cluster folders the work stays on the calling thread (a reconciler pass over a few changed
 * clusters, the example repository). Above it workers are started, but they never hold the work up: this thread
 * starts validating at once, and a worker that is not ready when the work runs out is stopped unused.
 */
export const MIN_CLUSTERS_FOR_WORKERS = 16;
/** Largest number of folders sent in one message: messages cost little next to a folder. */
const MAX_BATCH = 8;
/** Batches sent to a worker before its first answer comes back: it starts the next while this thread takes in the last. */
const IN_FLIGHT = 2;

/** Threads to use by default: every core the process may use (an affinity mask such as `taskset -c 0` counts). */
export function defaultJobs(): number {
  return availableParallelism();
}

/** Whether `count` folders with `jobs` threads go to workers. */
export function useWorkers(count: number, jobs: number): boolean {
  return jobs > 1 && count >= MIN_CLUSTERS_FOR_WORKERS;
}

/**
 * Folders a worker takes next: a share of what is left that shrinks as the work runs out (guided scheduling),
 * so that no thread is left holding a long batch while the others have finished.
 */
export function batchSize(left: number, threads: number): number {
  return Math.max(1, Math.min(MAX_BATCH, Math.floor(left / (threads * 4))));
}

export interface PoolOptions {
  /** Threads in all, this one included. */
  jobs: number;
  detail: Detail;
  cacheDir?: string;
  policy?: LoadedPolicy;
  /** This thread takes no folder before every worker is ready (or failed): tests that must see the workers' share. */
  waitForWorkers?: boolean;
}

export interface PoolResult {
  /** One result per name, in the order of the names. */
  results: ClusterResult[];
  /** Folders validated by worker threads (the rest by this one). */
  byWorkers: number;
}

/**
 * Validates `names` on this thread (which needs no start-up and yields to the event loop after every folder) and
 * `jobs - 1` workers; folders a failed worker held are validated here.
 */
export async function validateInWorkers(realRoot: string, names: string[], opts: PoolOptions): Promise<PoolResult> {
  const { jobs, detail, cacheDir, policy } = opts;
  const results = new Map<string, ClusterResult>();
  let next = 0;
  let byWorkers = 0;
  let hereDone!: () => void;
  const allTaken = new Promise<"done">((resolve) => (hereDone = () => resolve("done")));
  const threads = jobs;
  const url = new URL("../../bin/validate-worker.js", import.meta.url);

  const validateHere = async (batch: string[]): Promise<void> => {
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    for (const n of batch) results.set(n, validateFolder(realRoot, n, cache, detail, policy));
    await cache?.flush();
  };
  const readiness: Promise<boolean>[] = [];
  const run = async (): Promise<void> => {
    const worker = new Worker(url);
    const ready = started(worker);
    readiness.push(ready);
    worker.unref();
    worker.on("error", () => undefined); // the batches it held are validated here; never an uncaught error
    try {
      // Work that ran out before the worker was ready is not waited for: the worker is stopped unused.
      if ((await Promise.race([ready, allTaken])) !== true) return;
      const held = await new Promise<string[][]>((resolve) => {
        const inflight = new Map<number, string[]>();
        const finish = (): void => {
          worker.off("message", onMessage);
          worker.off("error", onFail);
          worker.off("exit", onFail);
          resolve([...inflight.values()]);
        };
        const send = (): void => {
          while (inflight.size < IN_FLIGHT && next < names.length) {
            const batch = names.slice(next, next + batchSize(names.length - next, threads));
            const id = next;
            next += batch.length;
            inflight.set(id, batch);
            worker.postMessage({ id, realRoot, names: batch, cacheDir, detail, policy } satisfies WorkRequest);
          }
          if (inflight.size === 0) finish();
        };
        const onMessage = (m: WorkAnswer): void => {
          const batch = inflight.get(m.id)!;
          inflight.delete(m.id);
          batch.forEach((n, i) => results.set(n, m.results[i]!));
          byWorkers += batch.length;
          send();
        };
        const onFail = (): void => finish(); // a worker that failed gets no more work
        worker.on("message", onMessage);
        worker.on("error", onFail);
        worker.on("exit", onFail);
        send();
      });
      for (const batch of held) await validateHere(batch);
    } finally {
      await worker.terminate();
    }
  };
  const here = async (): Promise<void> => {
    if (opts.waitForWorkers) await Promise.all(readiness);
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    while (next < names.length) {
      const n = names[next++]!;
      results.set(n, validateFolder(realRoot, n, cache, detail, policy));
      await new Promise((r) => setImmediate(r)); // let the workers' answers (and timers, sockets) in
    }
    hereDone();
    await cache?.flush();
  };
  const workers = Math.min(jobs - 1, names.length - 1);
  await Promise.all([...Array.from({ length: workers }, run), here()]);
  return { results: names.map((n) => results.get(n)!), byWorkers };
}

/** Whether the worker loaded (it says "ready"); false when it failed to start. */
function started(worker: Worker): Promise<boolean> {
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
