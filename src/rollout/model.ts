// fleet/rollout.yaml as the step reads it: defaults resolved, durations parsed, label selectors matched (pure).
import { parseDuration } from "../model/duration.js";
import type { LabelSelector, Pause, RolloutFile, RolloutSettings, Wave } from "./types.js";

/** Defaults of fleet/rollout.yaml (also in the schema). */
export const DEFAULT_GATE_TIMEOUT = "10m";
export const DEFAULT_PAUSE = "0";

function pauseOf(text: string): Pause {
  return text === "manual" ? "manual" : text === "0" ? 0 : parseDuration(text);
}

/** The settings of a schema-valid fleet/rollout.yaml, every default resolved. */
export function rolloutSettings(file: RolloutFile): RolloutSettings {
  const pause = file.pause ?? DEFAULT_PAUSE;
  const gate = file.healthGate?.timeout ?? DEFAULT_GATE_TIMEOUT;
  const waves: Wave[] = file.waves.map((w) => ({
    name: w.name,
    ...(w.selector ? { selector: w.selector } : {}),
    ...(w.percent !== undefined ? { percent: w.percent } : {}),
    pause: pauseOf(w.pause ?? pause),
    gateTimeoutMs: parseDuration(w.healthGate?.timeout ?? gate),
  }));
  const mu = file.maxUnavailable ?? 1;
  return { waves, maxUnavailable: mu as RolloutSettings["maxUnavailable"], onFailure: file.onFailure ?? "halt" };
}

/** How many clusters of a wave of `size` may be moved and not yet Healthy at once (a share rounds down, at least 1). */
export function unavailableBudget(maxUnavailable: RolloutSettings["maxUnavailable"], size: number): number {
  if (typeof maxUnavailable === "number") return Math.max(1, maxUnavailable);
  const pct = Number(maxUnavailable.slice(0, -1));
  return Math.max(1, Math.floor((pct * size) / 100));
}

/** Whether labels match a LabelSelector (every matchLabels pair and every expression; an empty selector matches all). */
export function selects(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const value = labels[e.key];
    const values = e.values ?? [];
    if (e.operator === "In" && !(has && values.includes(value!))) return false;
    if (e.operator === "NotIn" && has && values.includes(value!)) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}
