// fleet/rollout.yaml as the step reads it: defaults resolved, durations parsed, label selectors matched (pure).
import type { LabelSelector, RolloutSettings } from "../model/rollout-file.js";

/** How many clusters of a wave of `size` may be moved and not yet Healthy at once (a share rounds down, at least 1). */
export function unavailableBudget(maxUnavailable: RolloutSettings["maxUnavailable"], size: number): number {
  if (typeof maxUnavailable === "number") return Math.max(1, maxUnavailable);
  const pct = Number(maxUnavailable.slice(0, -1));
  return Math.max(1, Math.floor((pct * size) / 100));
}

/**
 * Whether labels match a LabelSelector (every matchLabels pair and every expression; an empty selector matches all).
 */
export function selects(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    const values = e.values ?? [];
    if (e.operator === "In" && !(has && values.includes(value!))) return false;
    if (e.operator === "NotIn" && has && values.includes(value!)) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}
