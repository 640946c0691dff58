// How long a command waits for the API server: one budget per request, retries included (the global --request-timeout).
// Kept apart from the client so that setting it loads nothing else (commands that never reach a host stay fast to
// start).

/**
 * How long a command waits for the API server. One budget covers a request and all its retries: a server that
 * accepts connections but never answers (stopped, overloaded) fails the request when it runs out.
 */
export interface RequestBudget {
  /** Longest wait for one request, retries included; 0 waits without end (kubectl's `--request-timeout`). */
  timeoutMs: number;
  /** Retry a refused connection: yes for the reconciler (a server restarts), no for a person waiting at a prompt. */
  retryRefused: boolean;
}

/** The default budget: 30 s per request (as kubectl's flag), refused connections fail at once. */
export const DEFAULT_BUDGET: RequestBudget = { timeoutMs: 30_000, retryRefused: false };
let processBudget: RequestBudget = { ...DEFAULT_BUDGET };

/**
 * Sets the budget of every client this process opens from now on (the global `--request-timeout`; the reconciler's
 * retries).
 */
export function setRequestBudget(budget: Partial<RequestBudget>): void {
  processBudget = { ...processBudget, ...budget };
}

export function requestBudget(): RequestBudget {
  return { ...processBudget };
}
