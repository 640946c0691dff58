// Waiting for clusters to become healthy (`vc apply --wait`): polls at a bounded interval until all are Healthy, one is
// Degraded, or the time runs out. The clock and the sleep are injected, so tests run the timeout without waiting.
import type { ClusterHealth } from "../model/health.js";

export interface WaitClock {
  /** Milliseconds since some fixed point. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: WaitClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface WaitOptions {
  timeoutMs: number;
  /** First pause between two looks (default 1 s); it doubles up to `maxIntervalMs` (default 5 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
  /** Called with each look's health of the clusters not yet settled. */
  onPoll?: (health: ReadonlyMap<string, ClusterHealth>) => void;
}

export type WaitOutcome =
  | { result: "healthy"; health: Map<string, ClusterHealth> }
  /** `cluster` is the first (by name) that is Degraded, or still not Healthy when the time ran out. */
  | { result: "degraded" | "timeout"; cluster: string; reason: string; health: Map<string, ClusterHealth> };

/**
 * Looks at each cluster's health until every one is Healthy (a Healthy cluster is not looked at again), any is
 * Degraded, or `timeoutMs` has passed; the last look is made at the deadline, never after it.
 */
export async function waitForHealth(
  clusters: readonly string[],
  look: (cluster: string) => Promise<ClusterHealth>,
  clock: WaitClock,
  opts: WaitOptions,
): Promise<WaitOutcome> {
  const deadline = clock.now() + opts.timeoutMs;
  const health = new Map<string, ClusterHealth>();
  const pending = [...clusters].sort();
  let interval = opts.intervalMs ?? 1000;
  const maxInterval = opts.maxIntervalMs ?? 5000;
  for (;;) {
    const looked = new Map<string, ClusterHealth>();
    for (const c of pending) looked.set(c, await look(c));
    for (const [c, h] of looked) health.set(c, h);
    opts.onPoll?.(looked);
    const degraded = pending.find((c) => looked.get(c)!.status === "Degraded");
    if (degraded)
      return { result: "degraded", cluster: degraded, reason: looked.get(degraded)!.reason ?? "Degraded", health };
    for (const c of [...pending]) if (looked.get(c)!.status === "Healthy") pending.splice(pending.indexOf(c), 1);
    if (pending.length === 0) return { result: "healthy", health };
    const left = deadline - clock.now();
    if (left <= 0) {
      const c = pending[0]!;
      const h = looked.get(c)!;
      return { result: "timeout", cluster: c, reason: `${h.status}${h.reason ? `: ${h.reason}` : ""}`, health };
    }
    await clock.sleep(Math.min(interval, left));
    interval = Math.min(interval * 2, maxInterval);
  }
}
