// The long-running reconciler: schedules passes (poll with jitter, webhook, folder watch, periodic full resync), one at a time, with backoff.
import { Backoff, jitter } from "./backoff.js";
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
}

export class ReconcileLoop {
  readonly state: PassState = newPassState();
  readonly backoff: Backoff;
  #timer?: NodeJS.Timeout;
  #resyncTimer?: NodeJS.Timeout;
  #running?: Promise<void>;
  #pending: { full: boolean; paths: string[] } | undefined;
  #stopped = true;
  #stopWatch?: () => Promise<void>;
  #lastProgress = Date.now();
  #firstPassDone = false;

  constructor(
    readonly deps: PassDeps,
    readonly opts: LoopOptions,
  ) {
    this.backoff = opts.backoff ?? new Backoff();
  }

  /** True once a first pass completed (readiness). */
  get ready(): boolean {
    return this.#firstPassDone;
  }

  /** False when no pass finished or was attempted within a generous window (liveness). */
  get healthy(): boolean {
    return Date.now() - this.#lastProgress < Math.max(this.opts.resyncMs, this.opts.intervalMs) * 3 + this.backoff.maxMs;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    if (this.opts.watch && this.deps.source.watch) {
      this.#stopWatch = await this.deps.source.watch((paths) => this.trigger({ kind: "incremental", paths }));
    }
    this.trigger({ kind: "full" });
    this.#scheduleResync();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#resyncTimer);
    await this.#stopWatch?.();
    await this.#running;
  }

  /** Requests a pass; while one runs, requests are merged and run once afterwards. */
  trigger(req: PassRequest): void {
    const p = this.#pending ?? { full: false, paths: [] };
    if (req.kind === "full") p.full = true;
    else p.paths.push(...(req.paths ?? []));
    if (this.#failed) {
      // A pass that failed earlier rides along with this one.
      p.full ||= this.#failed.full;
      p.paths.push(...this.#failed.paths);
      this.#failed = undefined;
    }
    this.#pending = p;
    // Cleared in a callback, not inside #drain: a drain with nothing to await (a standby's) finishes before the
    // assignment, and would otherwise leave a settled promise here that keeps every later trigger from running.
    if (!this.#running) this.#running = this.#drain().finally(() => (this.#running = undefined));
  }

  /** Resolves when no pass is running or pending. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending && !this.#stopped) {
      const p = this.#pending;
      this.#pending = undefined;
      clearTimeout(this.#timer);
      const req: PassRequest = p.full ? { kind: "full" } : { kind: "incremental", paths: p.paths };
      let delay: number;
      if (!this.deps.mayWrite()) {
        // A standby replica: nothing to do until it leads (becoming leader triggers a full pass).
        this.#lastProgress = Date.now();
        if (!this.#stopped && !this.#pending) this.#schedulePoll(jitter(this.opts.intervalMs));
        continue;
      }
      try {
        const res = await runPass(this.deps, this.state, req);
        this.backoff.reset();
        this.#firstPassDone = true;
        this.#lastProgress = Date.now();
        this.opts.onPass?.(res);
        delay = jitter(this.opts.intervalMs);
      } catch (err) {
        // The source is unreachable (or the host inventory cannot be read): keep the last good state, retry later.
        delay = this.backoff.fail();
        this.#lastProgress = Date.now();
        this.#failed = p; // retried as it was asked: a full pass stays full, watched paths are not lost
        this.deps.logger.warn("pass failed, retrying with backoff", { error: (err as Error).message, retryInMs: delay, failures: this.backoff.failures });
        this.opts.onPass?.({ error: err as Error, retryInMs: delay });
      }
      if (!this.#stopped && !this.#pending) this.#schedulePoll(delay);
    }
  }

  /** The request of a pass that failed, to run again at the next poll. */
  #failed?: { full: boolean; paths: string[] };

  /** The next poll: an incremental pass, or the pass that failed. */
  #schedulePoll(delay: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.trigger({ kind: "incremental" }), delay);
  }

  #scheduleResync(): void {
    if (this.#stopped) return;
    this.#resyncTimer = setTimeout(() => {
      this.trigger({ kind: "full" });
      this.#scheduleResync();
    }, jitter(this.opts.resyncMs));
  }
}
