// Timing of the loop: jittered poll intervals and exponential backoff with jitter after failures (pure but for Math.random).

/** `base` spread by +-`fraction` (default 10%), so that replicas and many reconcilers do not poll in step. */
export function jitter(base: number, fraction = 0.1, random: () => number = Math.random): number {
  return Math.max(0, Math.round(base * (1 + fraction * (2 * random() - 1))));
}

export interface BackoffOptions {
  /** First delay after a failure (default 1 s). */
  initialMs?: number;
  /** Ceiling (default 5 min). */
  maxMs?: number;
  random?: () => number;
}

/** Exponential backoff: initial, 2x, 4x ... capped at max, each with 10% jitter; reset after a success. */
export class Backoff {
  #failures = 0;
  readonly initialMs: number;
  readonly maxMs: number;
  readonly #random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 1000;
    this.maxMs = opts.maxMs ?? 300_000;
    this.#random = opts.random ?? Math.random;
  }

  get failures(): number {
    return this.#failures;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  fail(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.#failures, 30));
    this.#failures++;
    return Math.min(this.maxMs, jitter(base, 0.1, this.#random));
  }

  reset(): void {
    this.#failures = 0;
  }
}
