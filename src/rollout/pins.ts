// Which base each cluster is rendered at under a rollout record, why a cluster is held, and the health the step may
// trust (pure).
import { isApplied, type ClusterStatus } from "../records/status.js";
import type { Observations, RolloutRecord } from "./types.js";
import { isFinal } from "./step.js";

/**
 * The digest a cluster is rendered at: a moved cluster at the rollout's target (or back at its `from`), a member not
 * moved yet at its `from` (also once the rollout was aborted), any other cluster (not part of the rollout, or new) at
 * the rollout's target. Without a rollout record every cluster is at `current`, the newest base.
 */
export function pinOf(record: RolloutRecord | undefined, cluster: string, current: string): string {
  if (!record) return current;
  const m = record.moved[cluster];
  if (m) return m.at === "to" ? record.to.digest : m.from;
  const from = record.from[cluster];
  return from ?? record.to.digest;
}

/**
 * Where a cluster is before a rollout to `current` starts (its `from`): as the last rollout record left it when that
 * record knows it, else the base its status recorded, else `current` (a cluster never applied with a pinned base,
 * or new: not part of the rollout).
 */
export function startingPin(
  record: RolloutRecord | undefined,
  cluster: string,
  current: string,
  recorded: string | undefined,
): string {
  if (record && (record.moved[cluster] || record.from[cluster] !== undefined)) return pinOf(record, cluster, current);
  return recorded ?? current;
}

/** The digest a moved cluster came from, while it is at the rollout's target: its record's `previousBase`. */
export function previousOf(record: RolloutRecord | undefined, cluster: string): string | undefined {
  const m = record?.moved[cluster];
  return m?.at === "to" && record && !isFinal(record) ? m.from : undefined;
}

/** The wave a cluster is in (index), or -1. */
function waveOf(record: RolloutRecord, cluster: string): number {
  return record.waves.findIndex((w) => w.clusters.includes(cluster));
}

/**
 * Why a running rollout holds a cluster at an older base: `held by rollout <id>: wave 2/3 (early)`; undefined when it
 * does not.
 */
export function heldBy(record: RolloutRecord | undefined, cluster: string): string | undefined {
  if (!record || isFinal(record) || record.moved[cluster]?.at === "to") return undefined;
  const w = waveOf(record, cluster);
  if (w < 0) return undefined;
  return `held by rollout ${record.id}: wave ${w + 1}/${record.waves.length} (${record.waves[w]!.name})`;
}

/** What a cluster's status says while its folder needs the base being rolled out. */
export function waitingMessage(record: RolloutRecord, cluster: string): string {
  const w = waveOf(record, cluster);
  return `waiting for rollout ${record.id} (wave ${w + 1}${w >= 0 ? `, ${record.waves[w]!.name}` : ""})`;
}

/**
 * The clusters a pass must reconcile now for the rollout: those moved in the current wave that are not Healthy yet
 * (their health is read after their run) and every cluster the rollout has sent back. Sorted.
 */
export function inFlight(record: RolloutRecord | undefined): string[] {
  if (!record || isFinal(record)) return [];
  const out = new Set<string>();
  for (const c of record.waves[record.wave]?.clusters ?? []) {
    const m = record.moved[c];
    if (m && m.health !== "Healthy") out.add(c);
  }
  if (record.phase === "Aborting") for (const c of Object.keys(record.moved)) out.add(c);
  return [...out].sort();
}

/**
 * The health the step may trust of the current wave's moved clusters: a status recorded by a run at the rollout's
 * target base, that applied, after the cluster was moved and after the wave's gate (re)started (a resume). A failed or
 * invalid run after the move is `Unknown`.
 */
export function observedHealth(
  record: RolloutRecord,
  statuses: ReadonlyMap<string, ClusterStatus>,
): Observations["health"] {
  const out: Observations["health"] = {};
  for (const c of record.waves[record.wave]?.clusters ?? []) {
    const m = record.moved[c];
    const s = statuses.get(c);
    const last = s?.history[0];
    const movedAt = m?.movedAt;
    const since =
      record.gateSince !== undefined && movedAt !== undefined && record.gateSince > movedAt
        ? record.gateSince
        : movedAt;
    if (m?.at !== "to" || !s || !last || last.time < since! || s.base !== record.to.digest) continue;
    if (last.result === "applied" && s.health)
      out[c] = { status: s.health, ...(s.healthReason ? { reason: s.healthReason } : {}) };
    else if (last.result !== "applied")
      out[c] = { status: "Unknown", reason: `last run ${last.result}${last.message ? `: ${last.message}` : ""}` };
  }
  return out;
}

/**
 * The clusters sent back to their `from` base whose last run, since the rollout entered its phase (an abort's start),
 * applied them there: what lets an abort end (step.ts).
 */
export function returnedClusters(record: RolloutRecord, statuses: ReadonlyMap<string, ClusterStatus>): string[] {
  const out: string[] = [];
  for (const [c, m] of Object.entries(record.moved)) {
    const s = statuses.get(c);
    const last = s?.history[0];
    if (m.at === "back" && s && last && last.time >= record.since && s.base === m.from && isApplied(last.result))
      out.push(c);
  }
  return out.sort();
}
