// Validates many cluster folders on every core: the calling thread and worker threads (one per further core) take a few folders at a time.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import type { ClusterResult } from "./cluster.js";
import { validateFolder } from "./folder.js";
import type { LoadedPolicy } from "./policy.js";
import type { WorkAnswer, WorkRequest } from "./worker.js";

/**
 * Below this many cluster folders the work stays on the calling thread: starting a worker (0.15-0.25 s with
 * the bundle on the 2-vCPU development machine) costs more than it saves. Measured with `vc validate --jobs 1`
 * against `--jobs 2` on flow-style fleets of 20 mesh documents per cluster: two threads lost at 50-400
 * clusters and won at 1,000 while the machine was shared (load average 2-3.5).
 */
export const MIN_CLUSTERS_FOR_WORKERS = 500;
/** Folders per message: small enough to balance the load, large enough that messages cost little. */
const BATCH = 8;
/** Batches sent to a worker before its first answer comes back. */
const IN_FLIGHT = 2;

/** Threads to use by default: every core the process may use. */
export function defaultJobs(): number {
  return availableParallelism();
}

/** Whether `count` folders with `jobs` threads go to workers. */
export function useWorkers(count: number, jobs: number): boolean {
  return jobs > 1 && count >= MIN_CLUSTERS_FOR_WORKERS;
}

/**
 * The results of `names` (in that order), validated by `jobs` threads: this one (which needs no start-up and
 * yields to the event loop between batches) and `jobs - 1` workers; folders a failed worker held are validated here.
 */
export async function validateInWorkers(realRoot: string, names: string[], jobs: number, detail: Detail, cacheDir?: string, policy?: LoadedPolicy): Promise<ClusterResult[]> {
  const results = new Map<string, ClusterResult>();
  let next = 0;
  const url = new URL("../../bin/validate-worker.js", import.meta.url);
  const validateHere = async (batch: string[]): Promise<void> => {
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    for (const n of batch) results.set(n, validateFolder(realRoot, n, cache, detail, policy));
    await cache?.flush();
  };
  const run = async (): Promise<void> => {
    const worker = new Worker(url);
    worker.unref();
    worker.on("error", () => undefined); // the batches it held are validated here; never an uncaught error
    try {
      if (!(await started(worker))) return;
      // Two batches in flight: the worker starts the next while this thread takes in the answer to the last.
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
            const batch = names.slice(next, next + BATCH);
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
    const cache = cacheDir === undefined ? undefined : new DirCache(cacheDir);
    while (next < names.length) {
      // One folder at a time: a worker's answer waits for this thread to yield, and the worker idles meanwhile.
      const n = names[next++]!;
      results.set(n, validateFolder(realRoot, n, cache, detail, policy));
      await new Promise((r) => setImmediate(r)); // let the workers' answers (and timers, sockets) in
    }
    await cache?.flush();
  };
  const workers = Math.min(jobs - 1, Math.ceil(names.length / BATCH) - 1);
  await Promise.all([...Array.from({ length: workers }, run), here()]);
  return names.map((n) => results.get(n)!);
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
