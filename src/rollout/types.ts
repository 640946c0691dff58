// The shapes of progressive rollouts: fleet/rollout.yaml as read, the rollout record vc keeps, its phases and requests
// (docs/rollouts.md).
import type { HealthStatus } from "../model/health.js";

/** Where a rollout is. */
export type RolloutPhase =
  /** Moving the clusters of the current wave (at most maxUnavailable not yet Healthy) and waiting for its gate. */
  | "Progressing"
  /** Stopped by `vc rollout pause`: nothing moves until `vc rollout resume`. */
  | "Paused"
  /**
   * The current wave passed its gate: waiting out the pause before the next (or for resume when the pause is manual).
   */
  | "Waiting"
  /** A wave failed its gate (a Degraded cluster, or the gate timed out): nothing moves until resume or abort. */
  | "Halted"
  /** `vc rollout abort`: moved clusters are going back to their previous base. */
  | "Aborting"
  /** Every moved cluster is back at its previous base. Final. */
  | "Aborted"
  /** Every wave passed. Final. */
  | "Completed";

export const ROLLOUT_PHASES: readonly RolloutPhase[] = [
  "Progressing",
  "Paused",
  "Waiting",
  "Halted",
  "Aborting",
  "Aborted",
  "Completed",
];
/** Phases after which nothing more happens (the reconciler stops ticking). */
export const FINAL_PHASES: readonly RolloutPhase[] = ["Aborted", "Completed"];

/** A cluster the rollout moved to its target base (or is returning). */
export interface MovedCluster {
  /** Digest of the base snapshot the cluster was at before the rollout moved it: where abort and restore return it. */
  from: string;
  /** `to`: at the rollout's target base; `back`: returned (or returning) to `from` by abort or restore. */
  at: "to" | "back";
  /** Its health as last read (Unknown until read). */
  health: HealthStatus;
  /** Why it is not Healthy, when it is not. */
  reason?: string;
  /** When it was moved (ISO 8601). */
  movedAt: string;
}

/** What a `vc rollout` command asks of the reconciler; the reconciler acts on it and clears it. */
export interface RolloutRequest {
  action: "pause" | "resume" | "abort";
  /** Who asked (the identity the host knows the caller by). */
  by: string;
  /** When (ISO 8601). */
  at: string;
}

/** One wave of a running rollout: its clusters, fixed when the rollout started. */
export interface RolloutWave {
  name: string;
  clusters: string[];
}

/** The rollout record: one per source, in the records namespace (store.ts). Only vc writes it. */
export interface RolloutRecord {
  /** 12 hex of the target digest. */
  id: string;
  /** The owner name of the source (model/owner.ts). */
  source: string;
  /** The base snapshot this rollout moves clusters to, and the commit it was first seen at. */
  to: { digest: string; revision?: string };
  phase: RolloutPhase;
  /** Index of the current wave in `waves`. */
  wave: number;
  /** Every wave with its clusters (only clusters whose effective base layers change), fixed at the start. */
  waves: RolloutWave[];
  /** Each member's pin when the rollout started (digest by cluster): where abort and `onFailure: restore` return it. */
  from: Record<string, string>;
  /** The clusters moved so far, by name. */
  moved: Record<string, MovedCluster>;
  /** When the rollout started (ISO 8601). */
  started: string;
  /** When the current phase began (ISO 8601): the pause between waves counts from it. */
  since: string;
  /** When the current wave's health gate started (its first move, or a resume re-checking it). */
  gateSince?: string;
  /** Before Paused: the phase to resume into. */
  resumeTo?: RolloutPhase;
  /** What happened last, for people: `wave canary halted: cluster shop is Degraded: pod shop-0 CrashLoopBackOff`. */
  message: string;
  /** A request of `vc rollout pause|resume|abort` not acted on yet (stored under its own key, see store.ts). */
  request?: RolloutRequest;
}

/** What the step is told about the world: the current wave's moved clusters' health, and the time. */
export interface Observations {
  /** Health of moved clusters by name (only those read this tick; others keep their recorded health). */
  health: Record<string, { status: HealthStatus; reason?: string }>;
  /** Now, in milliseconds since the epoch. */
  now: number;
  /**
   * Clusters sent back (`at: "back"`) whose run since the rollout entered its phase applied them at their `from` base
   * (pins.ts returnedClusters): an abort ends only once every one is back.
   */
  returned?: readonly string[];
}

/** A cluster to (re)render and apply at a base snapshot. */
export interface Move {
  cluster: string;
  /** The digest of the base snapshot it goes to. */
  base: string;
}

/** What the step decides. */
export interface StepResult {
  record: RolloutRecord;
  /** Clusters to render at a new base and apply now. */
  moves: Move[];
  /** Whether the record changed (then it is written). */
  changed: boolean;
}
