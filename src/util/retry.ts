// Retries in one place: which failures of an API request are transient, how long to wait and how often to try, and
// the back-off of a loop after failures (exponential, with jitter, reset after a success).

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** First backoff delay; doubles each retry, with jitter, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After vc honours; a larger value is capped to this. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 30_000 };

/**
 * Network error codes that mean "the connection broke, the request may not have reached the server".
 * ERR_STREAM_PREMATURE_CLOSE: node-fetch 2 reports a keep-alive socket the server closed under a response this way.
 */
const TRANSIENT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

/** True for an error thrown by the transport (not an HTTP status) that a retry may cure. */
export function isTransientNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string; errno?: string }).code ?? (err as { errno?: string }).errno;
  if (code && TRANSIENT_CODES.has(code)) return true;
  return /socket hang up|ECONNRESET|network timeout|Premature close/i.test(err.message);
}

/** True for an HTTP status worth retrying: 429, 5xx, and 409 when the caller says a conflict is retryable. */
export function isRetryableStatus(status: number, retryConflict: boolean): boolean {
  return status === 429 || (status >= 500 && status <= 599) || (retryConflict && status === 409);
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry number `retry` (1-based): Retry-After when the server gave one, else exponential backoff with
 * jitter.
 */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfterMs?: number, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
