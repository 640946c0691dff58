// The wave planner: which clusters of a rollout go in which wave, by selector and cumulative percentage in a stable
// order (pure).
import { createHash } from "node:crypto";
import { selects } from "./model.js";
import type { RolloutSettings } from "../model/rollout-file.js";
import type { RolloutWave } from "./types.js";

/** A cluster the rollout moves, with the labels of its cluster.yaml. */
export interface Member {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** The stable order percentages pick in: sha256 of the cluster name (a re-plan picks the same clusters). */
export function stableKey(name: string): string {
  return createHash("sha256").update(name).digest("hex");
}

/**
 * The waves of a rollout over `members`. A cluster goes into the first wave that takes it: a wave with a selector takes
 * the remaining clusters that match; with `percent`, remaining clusters (matching its selector, if any) in the stable
 * order until ceil(percent × members / 100) clusters are in this wave or an earlier one; with neither, every cluster
 * left. Clusters left after the last wave go into the last wave. Each wave's clusters are sorted by name.
 */
export function planWaves(settings: RolloutSettings, members: readonly Member[]): RolloutWave[] {
  const ordered = [...members].sort((a, b) => cmp(stableKey(a.name), stableKey(b.name)) || cmp(a.name, b.name));
  const left = new Set(ordered.map((m) => m.name));
  const total = members.length;
  let placed = 0;
  const waves: RolloutWave[] = settings.waves.map((w) => {
    const candidates = ordered.filter((m) => left.has(m.name) && (!w.selector || selects(w.selector, m.labels)));
    let taken = candidates;
    if (w.percent !== undefined) {
      const reach = Math.ceil((w.percent * total) / 100 - 1e-9);
      taken = candidates.slice(0, Math.max(0, reach - placed));
    }
    for (const m of taken) left.delete(m.name);
    placed += taken.length;
    return { name: w.name, clusters: taken.map((m) => m.name) };
  });
  if (left.size > 0 && waves.length > 0) {
    const last = waves[waves.length - 1]!;
    last.clusters.push(...left);
  }
  for (const w of waves) w.clusters.sort(cmp);
  return waves;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
