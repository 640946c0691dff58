// Validates the cluster folders of a run: on this thread, and for large runs also on worker threads (one per further
// core) that claim folders one by one, largest first.
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { DirCache, type Detail } from "./cache.js";
import type { ClusterResult } from "./result.js";
import { folderBudget } from "../repo/budget.js";
import { folderFiles, listClusterFiles, type ClusterFiles } from "../repo/layout.js";
import { validateFolder } from "./folder.js";
import type { LoadedPolicy } from "./policy.js";
import type { WorkMessage, WorkRequest } from "./worker.js";
import type { ValidatedFolder } from "./digest.js";

/**
 * Files a run must have before workers are started. A worker is a second V8 isolate: it loads vc (about 0.1 s) and
 * runs js-yaml cold, interpreted until its own JIT has warmed up, which costs several tenths of a second of CPU
 * that this thread has already paid. On the 2-vCPU development machine a second thread won on the generated fleet of
 * 13,000 files (1,000 folders) and lost on the public corpus of 3,575 files (171 folders of larger files) and on
 * fleets of 400 folders (5,200 files): see docs/yaml-loading.md.
 */
const MIN_FILES_FOR_WORKERS = 6000;
/**
 * With a cache, workers start only once this thread has met this many folders the cache did not know: a warm run needs
 * none.
 */
const MISSES_BEFORE_WORKERS = 8;

/**
 * The heap of each validation worker (it holds one folder at a time): a young generation of 2 MiB semi-spaces, as
 * deploy/reconciler sets for the main thread, and an old generation bounded by what the largest folder the budget
 * admits needs (test/validate/pool-limits.test.ts). A bounded heap is also sized tighter by V8 (it grows by a smaller
 * factor): a worker's resident memory was about 90 MiB on a fleet of 10,000 folders without these (docs/scale.md).
 * A worker past them ends (ERR_WORKER_OUT_OF_MEMORY) and what it claimed is validated on this thread.
 */
export const WORKER_LIMITS = Object.freeze({ maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 128 });

/** Threads to use by default: every core the process may use (an affinity mask such as `taskset -c 0` counts). */
export function defaultJobs(): number {
  return availableParallelism();
}

/**
 * A folder to validate: its listing (undefined when listing failed: validateFolder reports it) and its bytes (0 until
 * sized).
 */
export interface Folder {
  name: string;
  files?: ClusterFiles;
  bytes: number;
}

function listed(realRoot: string, name: string, maxFiles: number): Folder {
  try {
    return { name, files: listClusterFiles(realRoot, name, maxFiles), bytes: 0 };
  } catch {
    return { name, bytes: 0 };
  }
}

const fileCount = (f: Folder): number => (f.files ? folderFiles(f.files).length : 0);

/**
 * The folders, largest first: a thread that took a large folder last would hold up the end (one cluster of large
 * manifests can be a fifth of a fleet's bytes).
 */
export function largestFirst(realRoot: string, folders: Folder[]): Folder[] {
  for (const f of folders) {
    if (!f.files) continue;
    for (const rel of folderFiles(f.files)) {
      f.bytes += statSync(join(realRoot, rel), { throwIfNoEntry: false })?.size ?? 0;
    }
  }
  return folders.sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
}

export interface PoolOptions {
  /** Threads in all, this one included. */
  jobs: number;
  detail: Detail;
  cacheDir?: string;
  policy?: LoadedPolicy;
  /**
   * `auto`: workers for runs of MIN_FILES_FOR_WORKERS files or more (with a cache, once MISSES_BEFORE_WORKERS folders
   * missed it); `always`: workers from the start, and this thread claims no folder at all, so the workers' share is
   * every folder a worker could take whatever the machine's load (tests that must see the workers' share).
   */
  workers?: "auto" | "always";
  /** The file count from which `auto` uses workers (default MIN_FILES_FOR_WORKERS). */
  minFiles?: number;
  /** Clusters pinned by a rollout: the folder of the base snapshot each reads its fleet/ layers from (src/rollout/). */
  bases?: Readonly<Record<string, string>>;
  /**
   * The shared inputs' digest and what the records kept of the folders: each result carries its digest, and a
   * summary whose digest matches is the record's (validateFolder). Workers then start as with a cache: once this thread
   * has met MISSES_BEFORE_WORKERS folders it had to validate.
   */
  known?: { shared: string; validated: ReadonlyMap<string, ValidatedFolder> };
}

export interface PoolResult {
  /** One result per name, in the order of the names. */
  results: ClusterResult[];
  /** Folders validated by worker threads (the rest by this one). */
  byWorkers: number;
  /** Worker threads started. */
  workers: number;
}

/**
 * Validates the folders `names`. With workers, every thread claims the next folder from one shared counter, so a
 * worker never waits for this thread to hand it work, and the last folders, the smallest, end together; folders a
 * failed worker claimed but did not answer are validated here.
 */
export async function validateFolders(
  realRoot: string,
  names: readonly string[],
  opts: PoolOptions,
): Promise<PoolResult> {
  const { detail, cacheDir, policy } = opts;
  const always = opts.workers === "always";
  const threads = Math.min(opts.jobs, names.length);
  const maxFiles = folderBudget(policy?.policy?.folderBudget).files;
  const queue = names.map((n) => listed(realRoot, n, maxFiles));
  const parallel =
    threads > 1 && (always || queue.reduce((n, f) => n + fileCount(f), 0) >= (opts.minFiles ?? MIN_FILES_FOR_WORKERS));

  const claims = new Int32Array(new SharedArrayBuffer(4));
  const claim = (): number => Atomics.add(claims, 0, 1);
  const results: Array<ClusterResult | undefined> = new Array(queue.length);
  const opened = cacheDir === undefined ? undefined : DirCache.open(cacheDir);
  const cache = opened && "cache" in opened ? opened.cache : undefined;
  const known = opts.known;
  // Folders this thread had to validate although the records knew of them (or had none): like cache misses.
  let unknown = 0;
  const validate = (i: number): void => {
    const f = queue[i]!;
    const validated = known?.validated.get(f.name);
    const k = known && { shared: known.shared, ...(validated ? { validated } : {}) };
    const r = validateFolder(realRoot, f.name, cache, detail, policy, f.files, opts.bases?.[f.name], k);
    if (known && (validated === undefined || r.digest !== validated.digest)) unknown++;
    results[i] = r;
  };
  const pool = new Workers(realRoot, queue, claims, results, {
    cacheDir,
    detail,
    policy,
    ...(opts.bases ? { bases: opts.bases } : {}),
    ...(known ? { known: { shared: known.shared, validated: recordOf(known.validated, names) } } : {}),
  });
  // The folders not claimed yet are sized and put largest first just before the workers start (never in a warm run).
  const startWorkers = (from: number): void => {
    queue.splice(from, queue.length - from, ...largestFirst(realRoot, queue.slice(from)));
    pool.start(threads - 1);
  };
  const lazy = cache !== undefined || known !== undefined;
  const misses = (): number => (known ? unknown : (cache?.misses ?? 0));
  if (parallel && (always || !lazy)) startWorkers(0);
  if (always && parallel) await pool.ready();

  for (let i = always && pool.started ? queue.length : claim(); i < queue.length; i = claim()) {
    validate(i);
    if (parallel && !pool.started && misses() >= MISSES_BEFORE_WORKERS) startWorkers(i + 1);
    // Let the workers' answers in (and, for a service such as the reconciler, timers and sockets).
    if (pool.started || i % 10 === 9) await new Promise((r) => setImmediate(r));
  }
  await pool.finish();
  await cache?.flush();

  // What a failed worker claimed and never answered.
  for (let i = 0; i < queue.length; i++) if (results[i] === undefined) validate(i);
  await cache?.flush();
  const byName = new Map(queue.map((f, i) => [f.name, results[i]!]));
  return { results: names.map((n) => byName.get(n)!), byWorkers: pool.answered, workers: pool.count };
}

/** What the records kept of the named folders, as a plain object a worker can be sent. */
function recordOf(
  validated: ReadonlyMap<string, ValidatedFolder>,
  names: readonly string[],
): Record<string, ValidatedFolder> {
  const out: Record<string, ValidatedFolder> = {};
  for (const n of names) {
    const v = validated.get(n);
    if (v) out[n] = v;
  }
  return out;
}

/** The worker threads of one run; each gets the whole queue and the shared counter, and claims from it once loaded. */
class Workers {
  answered = 0;
  /** Workers started (0 until start). */
  count = 0;
  private readonly running: Array<{ worker: Worker; ready: Promise<boolean>; done: Promise<void> }> = [];

  constructor(
    private readonly realRoot: string,
    private readonly queue: readonly Folder[],
    private readonly claims: Int32Array,
    private readonly results: Array<ClusterResult | undefined>,
    private readonly settings: Pick<WorkRequest, "cacheDir" | "detail" | "policy" | "bases" | "known">,
  ) {}

  get started(): boolean {
    return this.count > 0;
  }

  start(count: number): void {
    this.count = count;
    const url = new URL("../../bin/validate-worker.js", import.meta.url);
    const folders = this.queue.map((f) => ({ name: f.name, files: f.files }));
    for (let k = 0; k < count; k++) {
      // Kept referenced: while this thread waits for its answers, the worker is what keeps the process alive.
      const worker = new Worker(url, { resourceLimits: WORKER_LIMITS });
      worker.on("error", () => undefined); // what it claimed is validated here; never an uncaught error
      const ready = readyOf(worker);
      const done = new Promise<void>((resolve) => {
        const finish = (): void => {
          worker.off("message", onMessage);
          worker.off("error", finish);
          worker.off("exit", finish);
          resolve();
        };
        const onMessage = (m: WorkMessage | "ready"): void => {
          if (m === "ready") return;
          if ("done" in m) return finish();
          this.results[m.index] = m.result;
          this.answered++;
        };
        worker.on("message", onMessage);
        worker.on("error", finish); // a failed worker claims nothing more
        worker.on("exit", finish);
      });
      // Sent at once: the worker starts claiming as soon as it has loaded, without waiting for this (busy) thread.
      worker.postMessage({
        realRoot: this.realRoot,
        folders,
        claims: this.claims.buffer as SharedArrayBuffer,
        ...this.settings,
      } satisfies WorkRequest);
      this.running.push({ worker, ready, done });
    }
  }

  /** Resolves once every worker has loaded (or failed to). */
  async ready(): Promise<void> {
    await Promise.all(this.running.map((w) => w.ready));
  }

  /**
   * Waits until every worker has answered what it claimed and said it is done (one still loading when the work ran out
   * claims nothing once loaded and says so at once).
   */
  async finish(): Promise<void> {
    await Promise.all(this.running.map((w) => w.done.finally(() => w.worker.terminate())));
  }
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
