// The long-running reconciler: schedules passes (poll with jitter, webhook, folder watch, periodic full resync), one
// at a time, with backoff; changes before chores: a full pass lets pending changes run between its chunks.
import { Backoff, jitter } from "../util/retry.js";
import { newPassState, runPass, type PassDeps, type PassRequest, type PassResult, type PassState } from "./pass.js";

export interface LoopOptions {
  /** Poll interval of a remote (default 1 min); each wait is jittered by 10%. */
  intervalMs: number;
  /** Full resync interval (default 10 min): every cluster, to correct drift on the host. */
  resyncMs: number;
  /** Watch a local folder source instead of polling it. */
  watch: boolean;
  backoff?: Backoff;
  /** Called after every pass or failed attempt (tests and the CLI). */
  onPass?: (r: PassResult | { error: Error; retryInMs: number }) => void;
  /** Called as a pass starts (the fleet page's progress). */
  onPassStart?: (req: PassRequest) => void;
  /** Timers (tests inject a clock); default the process's. */
  clock?: Clock;
  /** While a rollout runs, the next pass comes within this long (default 10 s): it reads the wave's health. */
  rolloutIntervalMs?: number;
}

export interface Clock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const PROCESS_CLOCK: Clock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Requests waiting for the pass in hand: a full pass, and changes (an incremental pass, with watched paths). */
interface Pending {
  full: boolean;
  incremental: boolean;
  paths: string[];
}

export class ReconcileLoop {
  readonly state: PassState = newPassState();
  readonly backoff: Backoff;
  #timer?: unknown;
  #resyncTimer?: unknown;
  #running?: Promise<void>;
  #pending: Pending | undefined;
  readonly #clock: Clock;
  #stopped = true;
  #stopWatch?: () => Promise<void>;
  #lastProgress = Date.now();
  #firstPassDone = false;

  constructor(
    readonly deps: PassDeps,
    readonly opts: LoopOptions,
  ) {
    this.backoff = opts.backoff ?? new Backoff();
    this.#clock = opts.clock ?? PROCESS_CLOCK;
  }

  /** True once a first pass completed (readiness). */
  get ready(): boolean {
    return this.#firstPassDone;
  }

  /** False when no pass finished or was attempted within a generous window (liveness). */
  get healthy(): boolean {
    return (
      Date.now() - this.#lastProgress < Math.max(this.opts.resyncMs, this.opts.intervalMs) * 3 + this.backoff.maxMs
    );
  }

  async start(): Promise<void> {
    this.#stopped = false;
    if (this.opts.watch && this.deps.source.watch) {
      this.#stopWatch = await this.deps.source.watch((paths) => this.trigger({ kind: "incremental", paths }));
    }
    // The first full pass; the resync interval counts from the end of each full pass (#drain arms it).
    this.trigger({ kind: "full" });
  }

  /** True once stop() was called: a pass in hand finishes the clusters it started and ends. */
  get stopping(): boolean {
    return this.#stopped;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    this.#clock.clearTimeout(this.#resyncTimer);
    await this.#stopWatch?.();
    await this.#running;
  }

  /** Requests a pass; while one runs, requests are merged and run once afterwards. */
  trigger(req: PassRequest): void {
    const p = this.#pending ?? { full: false, incremental: false, paths: [] };
    if (req.kind === "full") p.full = true;
    else {
      p.incremental = true;
      p.paths.push(...(req.paths ?? []));
    }
    if (this.#failed) {
      // A pass that failed earlier rides along with this one.
      p.full ||= this.#failed.full;
      p.incremental ||= this.#failed.incremental;
      p.paths.push(...this.#failed.paths);
      this.#failed = undefined;
    }
    this.#pending = p;
    // Cleared in a callback, not inside #drain: a drain with nothing to await (a standby's) finishes before the
    // assignment, and would otherwise leave a settled promise here that keeps every later trigger from running.
    if (!this.#running) this.#running = this.#drain().finally(() => (this.#running = undefined));
  }

  /** What waits for the next pass, as a copy: a full resync, and the changed paths a watcher reported. */
  get pending(): { full: boolean; paths: string[] } | undefined {
    const p = this.#pending;
    return p && { full: p.full, paths: [...p.paths] };
  }

  /** Resolves when no pass is running or pending. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending && !this.#stopped) {
      const p = this.#pending;
      this.#pending = undefined;
      this.#clock.clearTimeout(this.#timer);
      const req: PassRequest = p.full ? { kind: "full" } : { kind: "incremental", paths: p.paths };
      // A full pass takes long on a large fleet: polls go on meanwhile, and what they find runs between its chunks.
      if (req.kind === "full") this.#schedulePoll(jitter(this.opts.intervalMs));
      let delay: number;
      if (!this.deps.mayWrite()) {
        // A standby replica: nothing to do until it leads (becoming leader triggers a full pass).
        this.#lastProgress = Date.now();
        if (!this.#stopped && !this.#pending) this.#schedulePoll(jitter(this.opts.intervalMs));
        continue;
      }
      try {
        this.opts.onPassStart?.(req);
        const res = await runPass(this.#passDeps(), this.state, req);
        this.backoff.reset();
        if (!res.interrupted) this.#firstPassDone = true;
        this.#lastProgress = Date.now();
        this.opts.onPass?.(res);
        if (res.kind === "full") this.#scheduleResync();
        delay = jitter(this.opts.intervalMs);
        if (this.state.rollout?.active) delay = Math.min(delay, this.opts.rolloutIntervalMs ?? 10_000);
      } catch (err) {
        // The source is unreachable (or the host inventory cannot be read): keep the last good state, retry later.
        delay = this.backoff.fail();
        this.#lastProgress = Date.now();
        this.#failed = p; // retried as it was asked: a full pass stays full, watched paths are not lost
        this.deps.logger.warn("pass failed, retrying with backoff", {
          error: (err as Error).message,
          retryInMs: delay,
          failures: this.backoff.failures,
        });
        this.opts.onPass?.({ error: err as Error, retryInMs: delay });
      }
      if (!this.#stopped && !this.#pending) this.#schedulePoll(delay);
    }
  }

  /** The request of a pass that failed, to run again at the next poll. */
  #failed?: Pending;

  /** The pass dependencies with the loop's hooks: stop requests, and changes run between the chunks of a full pass. */
  #passDeps(): PassDeps {
    return {
      ...this.deps,
      stopping: () => this.#stopped,
      betweenChunks: (rev) => this.#changesFirst(rev),
      pending: () => !!this.#pending?.incremental && !this.#stopped && this.deps.mayWrite(),
    };
  }

  /**
   * Runs the pending changes in the middle of a full pass: an incremental pass counting the changes from `revision`,
   * the one the full pass follows (so the start-up pass, before any pass has completed, lets changes in too); the
   * full request stays pending. Not while stopping. Returns that pass; a full pass is asked for when it could not
   * count the changes.
   */
  async #changesFirst(revision: string): Promise<PassResult | undefined> {
    const p = this.#pending;
    if (!p?.incremental || this.#stopped || !this.deps.mayWrite()) return undefined;
    const paths = p.paths;
    p.incremental = false;
    p.paths = [];
    if (!p.full) this.#pending = undefined;
    try {
      const res = await runPass({ ...this.deps, stopping: () => this.#stopped }, this.state, {
        kind: "incremental",
        paths,
        from: revision,
      });
      this.#lastProgress = Date.now();
      this.opts.onPass?.(res);
      if (res.uncounted) this.trigger({ kind: "full" });
      this.#schedulePoll(jitter(this.opts.intervalMs));
      return res;
    } catch (err) {
      // Left for after the full pass (retried with it, with backoff if it fails again).
      const again = this.#pending ?? { full: false, incremental: false, paths: [] };
      again.incremental = true;
      again.paths.push(...paths);
      this.#pending = again;
      this.deps.logger.warn("changes during a full pass failed: retrying after it", { error: (err as Error).message });
      return undefined;
    }
  }

  /** The next poll: an incremental pass, or the pass that failed. */
  #schedulePoll(delay: number): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = this.#clock.setTimeout(() => this.trigger({ kind: "incremental" }), delay);
  }

  /** The next full resync, counted from now (the end of the last full pass): passes never run back to back. */
  #scheduleResync(): void {
    if (this.#stopped) return;
    this.#clock.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = this.#clock.setTimeout(() => this.trigger({ kind: "full" }), jitter(this.opts.resyncMs));
  }
}
