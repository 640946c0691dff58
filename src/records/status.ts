// The reconcile status of one cluster and its last reconciliations; how it is folded and (de)serialised (pure).
import { maskCredentialsInText } from "../model/secrets.js";
import { HEALTH_STATUSES, type HealthStatus } from "../model/health.js";
import { parseValidated, type ValidatedFolder } from "../validate/digest.js";
import type { ApplyLease } from "./lease.js";

/** How a reconciliation of one cluster ended. */
export type Result =
  /** Applied (or nothing to change): the host matches the revision. */
  | "applied"
  /** The cluster folder failed validation at this revision: nothing applied, the last good revision stays live. */
  | "invalid"
  /** Some objects could not be written (the next run retries). */
  | "failed"
  /** The prune guard stopped the run (too many deletes): nothing changed, the last applied revision stays live. */
  | "blocked"
  /** `suspend: true`: not reconciled. */
  | "suspended"
  /** The cluster folder was removed and its objects pruned. */
  | "deleted";

const RESULTS: readonly Result[] = ["applied", "invalid", "failed", "blocked", "suspended", "deleted"];

export interface Counts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

export const ZERO_COUNTS: Counts = { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };

/** The command that recorded a run other than the reconciler (a record without `via` is the reconciler's). */
export type RecordedVia = "apply" | "adopt";

/** One reconciliation of one cluster. */
export interface Reconciliation {
  /**
   * Commit SHA; `<sha>-dirty` when `vc apply` read a work tree that differed from it (git/dirty.ts); `local` outside
   * git.
   */
  revision: string;
  /** ISO 8601 start time. */
  time: string;
  durationMs: number;
  result: Result;
  counts: Counts;
  message?: string;
  /** `vc apply` or `vc adopt` ran it; absent: the reconciler. */
  via?: RecordedVia;
  /** Who ran it (vc apply / adopt): the identity the host knows the caller by. */
  by?: string;
  /** How `by` was learned (host/identity.ts): `SelfSubjectReview`, `client certificate`, `kubeconfig user`, ... */
  byFrom?: string;
  /** The cluster's health on the host when the run ended (src/health), and why when not Healthy. */
  health?: HealthStatus;
  healthReason?: string;
}

export interface ClusterStatus {
  cluster: string;
  hostNamespace: string;
  /** The revision whose objects are live (the last one applied successfully). */
  lastAppliedRevision?: string;
  lastAppliedTime?: string;
  lastAttemptedRevision?: string;
  lastAttemptTime?: string;
  result?: Result;
  message?: string;
  /** Newest first, at most HISTORY_LIMIT. */
  history: Reconciliation[];
  /** Set when an operation (e.g. `vc restore`) suspended reconciliation at run time: who and why. */
  suspendedBy?: string;
  /** Not stored in the status: the apply lease on the record (a run writing the cluster, or one that never ended). */
  applying?: ApplyLease;
  /** Entries of a stored history that were not reconciliations (damaged or hand-edited) and were left out. */
  damagedHistory?: number;
  /** The owner name of the source that wrote it (model/owner.ts); another source never rewrites it. */
  owner?: string;
  /** Who applied the live revision and with what (from its reconciliation): absent for the reconciler. */
  lastAppliedBy?: string;
  lastAppliedVia?: RecordedVia;
  /** The health the last reconciliation that looked at the host saw (its entry's). */
  health?: HealthStatus;
  healthReason?: string;
  /**
   * Digest of the fleet base snapshot the cluster was last applied with, while the fleet has a rollout
   * (docs/rollouts.md).
   */
  base?: string;
  /** While a rollout has moved the cluster: the digest it was at before. */
  previousBase?: string;
  /**
   * The last validation of the cluster's folder a reconciler recorded: the digest of its inputs and the summary they
   * gave (a valid folder's settings and public-host claims), so that a new reconciler skips validating the folder in
   * its index while the digest matches (validate/digest.ts). Kept only where tenants cannot write: the record.
   */
  validated?: ValidatedFolder;
  /**
   * Not stored in the status: reconciliations that `record` pushed out of `history` (past HISTORY_LIMIT), for the
   * store to keep in the cluster's longer history (status-store.ts) before the status is written.
   */
  spilled?: Reconciliation[];
}

/** A history entry as vc writes it: revision, time and a known result. */
function isReconciliation(x: unknown): x is Reconciliation {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const r = x as Record<string, unknown>;
  return (
    typeof r.revision === "string" &&
    typeof r.time === "string" &&
    typeof r.result === "string" &&
    (RESULTS as readonly string[]).includes(r.result)
  );
}

/** Reconciliations kept in the status itself (the newest); older ones go to the history store (archive.ts). */
export const HISTORY_LIMIT = 10;

/**
 * Longest message kept in a status or history entry (characters): one runaway server message cannot fill the ConfigMap.
 */
export const MESSAGE_LIMIT = 2048;
/** Longest `by` kept. */
const BY_LIMIT = 256;

/** Results after which the reconciled revision is the live one. */
export function isApplied(result: Result): boolean {
  return result === "applied" || result === "deleted";
}

/** Folds one reconciliation into a status: the last applied revision moves only when it was applied. */
export function record(
  prev: ClusterStatus | undefined,
  cluster: string,
  hostNamespace: string,
  r: Reconciliation,
): ClusterStatus {
  const {
    damagedHistory: _damaged,
    spilled: _spilled,
    applying: _applying,
    ...kept
  } = prev ?? { cluster, hostNamespace, history: [] };
  const entry = cleanEntry(r);
  const all = [entry, ...(prev?.history ?? [])];
  const next: ClusterStatus = {
    ...kept,
    cluster,
    hostNamespace,
    lastAttemptedRevision: r.revision,
    lastAttemptTime: r.time,
    result: r.result,
    message: entry.message ?? defaultMessage(r),
    history: all.slice(0, HISTORY_LIMIT),
  };
  if (all.length > HISTORY_LIMIT) next.spilled = all.slice(HISTORY_LIMIT);
  if (entry.health !== undefined) {
    next.health = entry.health;
    if (entry.healthReason !== undefined) next.healthReason = entry.healthReason;
    else delete next.healthReason;
  }
  if (isApplied(r.result)) {
    next.lastAppliedRevision = r.revision;
    next.lastAppliedTime = r.time;
    delete next.lastAppliedBy;
    delete next.lastAppliedVia;
    if (entry.by !== undefined) next.lastAppliedBy = entry.by;
    if (entry.via !== undefined) next.lastAppliedVia = entry.via;
  }
  return next;
}

/** An entry as stored: URL credentials masked, long texts cut, no undefined fields. */
function cleanEntry(r: Reconciliation): Reconciliation {
  const { message, by, byFrom, via, health, healthReason, ...rest } = r;
  const out: Reconciliation = { ...rest };
  if (health !== undefined) out.health = health;
  if (healthReason !== undefined) out.healthReason = cut(maskCredentialsInText(healthReason), MESSAGE_LIMIT);
  if (message !== undefined) out.message = cut(maskCredentialsInText(message), MESSAGE_LIMIT);
  if (via !== undefined) out.via = via;
  if (by !== undefined) out.by = cut(by, BY_LIMIT);
  if (byFrom !== undefined) out.byFrom = byFrom;
  return out;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 15;
  // Never half a character: a cut between the two halves of a surrogate pair moves back one.
  if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}... (truncated)`;
}

/** Who ran a reconciliation, as shown: `alice (vc apply)`, or `reconciler`. */
export function actorOf(r: { via?: RecordedVia; by?: string }): string {
  return r.via === undefined ? "reconciler" : `${r.by ?? "unknown user"} (vc ${r.via})`;
}

/** Who applied the live revision, as shown (`-` when nothing is applied). */
export function appliedBy(s: ClusterStatus): string {
  if (!s.lastAppliedRevision) return "-";
  return actorOf({ via: s.lastAppliedVia, by: s.lastAppliedBy });
}

function defaultMessage(r: Reconciliation): string {
  const c = r.counts;
  return (
    `${c.created} created, ${c.updated} updated, ${c.deleted} deleted, ${c.unchanged} ` +
    `unchanged${c.failed ? `, ${c.failed} failed` : ""}`
  );
}

/** The keys a status may hold in its ConfigMap's `data` (and the dir target's status file), besides `history`. */
const STATUS_FIELDS = [
  "lastAppliedRevision",
  "lastAppliedTime",
  "lastAttemptedRevision",
  "lastAttemptTime",
  "result",
  "message",
  "owner",
  "lastAppliedBy",
  "lastAppliedVia",
  "health",
  "healthReason",
  "base",
  "previousBase",
] as const;

/** Every data key of a stored status (a write of a status removes those its new status lacks). */
export const STATUS_KEYS: readonly string[] = ["cluster", "hostNamespace", "history", ...STATUS_FIELDS];

/** The string map stored in the status ConfigMap's `data` (and the dir target's status file). */
export function toData(s: ClusterStatus): Record<string, string> {
  const data: Record<string, string> = {
    cluster: s.cluster,
    hostNamespace: s.hostNamespace,
    history: JSON.stringify(s.history),
  };
  for (const k of STATUS_FIELDS) {
    const v = s[k];
    if (v !== undefined) data[k] = v;
  }
  if (s.validated) data.validated = JSON.stringify(s.validated);
  return data;
}

/** Reads a status back; tolerant of missing or damaged fields (a damaged history reads as empty). */
export function fromData(
  data: Record<string, string> | undefined,
  fallbackCluster = "",
  fallbackNamespace = "",
): ClusterStatus | undefined {
  if (!data) return undefined;
  const { entries: history, damaged } = parseHistory(data.history);
  const s: ClusterStatus = {
    cluster: data.cluster ?? fallbackCluster,
    hostNamespace: data.hostNamespace ?? fallbackNamespace,
    history,
  };
  if (damaged > 0) s.damagedHistory = damaged;
  for (const k of [
    "lastAppliedRevision",
    "lastAppliedTime",
    "lastAttemptedRevision",
    "lastAttemptTime",
    "message",
    "owner",
    "lastAppliedBy",
  ] as const) {
    if (data[k] !== undefined) s[k] = data[k];
  }
  for (const k of ["base", "previousBase"] as const) if (/^[0-9a-f]{64}$/.test(data[k] ?? "")) s[k] = data[k];
  if (data.validated !== undefined) {
    const validated = parseValidated(parseJson(data.validated));
    if (validated) s.validated = validated;
  }
  if (data.result && (RESULTS as readonly string[]).includes(data.result)) s.result = data.result as Result;
  if (data.lastAppliedVia === "apply" || data.lastAppliedVia === "adopt") s.lastAppliedVia = data.lastAppliedVia;
  if ((HEALTH_STATUSES as readonly string[]).includes(data.health ?? "")) {
    s.health = data.health as HealthStatus;
    if (data.healthReason !== undefined) s.healthReason = data.healthReason;
  }
  return s;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A stored history (JSON array, newest first): the entries vc can read, and how many it could not (damaged or
 * hand-edited).
 */
export function parseHistory(text: string | undefined): { entries: Reconciliation[]; damaged: number } {
  try {
    const parsed = JSON.parse(text ?? "[]") as unknown;
    if (!Array.isArray(parsed)) return { entries: [], damaged: 1 };
    const entries = parsed.filter(isReconciliation);
    return { entries, damaged: parsed.length - entries.length };
  } catch {
    return { entries: [], damaged: 1 };
  }
}

/** Sets a status's `base` and `previousBase` to a run's pin (absent keys: unpinned). */
export function pinStatus(status: ClusterStatus, pin: { base?: string; previousBase?: string }): void {
  if (pin.base !== undefined) status.base = pin.base;
  else delete status.base;
  if (pin.previousBase !== undefined) status.previousBase = pin.previousBase;
  else delete status.previousBase;
}
