// The rollout as people and programs see it: what `vc rollout status -o json`, the fleet page and its API show.
import type { RolloutRecord } from "./types.js";

/** The rollout record's facts and each wave with its clusters, their base and health. */
export type RolloutView = ReturnType<typeof rolloutView>;

/** What `status -o json|yaml` prints: the record's facts and each wave with its clusters. */
export function rolloutView(r: RolloutRecord) {
  return {
    id: r.id,
    source: r.source,
    phase: r.phase,
    message: r.message,
    to: r.to,
    started: r.started,
    since: r.since,
    ...(r.request ? { request: r.request } : {}),
    wave: r.waves.length === 0 ? null : { index: r.wave, name: r.waves[r.wave]?.name ?? null, of: r.waves.length },
    waves: r.waves.map((w, i) => ({
      name: w.name,
      state:
        r.phase === "Completed" || i < r.wave ? "done" : i === r.wave && r.phase !== "Aborted" ? "current" : "pending",
      count: w.clusters.length,
      moved: w.clusters.filter((c) => r.moved[c]?.at === "to").length,
      healthy: w.clusters.filter((c) => r.moved[c]?.at === "to" && r.moved[c]!.health === "Healthy").length,
      clusters: w.clusters.map((c) => {
        const m = r.moved[c];
        return {
          name: c,
          base: m?.at === "to" ? "to" : "from",
          health: m ? m.health : null,
          ...(m?.reason ? { reason: m.reason } : {}),
        };
      }),
    })),
  };
}

/** Where a cluster is in a rollout: its wave's name, place (0-based) and state. */
export interface ClusterWave {
  name: string;
  index: number;
  of: number;
  state: string;
}

/** The wave of each cluster the rollout holds, by cluster. */
export function wavesByCluster(view: RolloutView): Map<string, ClusterWave> {
  const out = new Map<string, ClusterWave>();
  view.waves.forEach((w, index) => {
    for (const c of w.clusters) out.set(c.name, { name: w.name, index, of: view.waves.length, state: w.state });
  });
  return out;
}
