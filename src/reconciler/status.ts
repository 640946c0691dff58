// The reconcile status of one cluster and its last reconciliations; how it is folded and (de)serialised (pure).
import { maskUrlCredentials } from "../model/secrets.js";

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

export const RESULTS: readonly Result[] = ["applied", "invalid", "failed", "blocked", "suspended", "deleted"];

export interface Counts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

export const ZERO_COUNTS: Counts = { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };

/** One reconciliation of one cluster. */
export interface Reconciliation {
  revision: string;
  /** ISO 8601 start time. */
  time: string;
  durationMs: number;
  result: Result;
  counts: Counts;
  message?: string;
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
  /** Entries of a stored history that were not reconciliations (damaged or hand-edited) and were left out. */
  damagedHistory?: number;
  /** The owner name of the source that wrote it (model/owner.ts); another source never rewrites it. */
  owner?: string;
}

/** A history entry as vc writes it: revision, time and a known result. */
function isReconciliation(x: unknown): x is Reconciliation {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const r = x as Record<string, unknown>;
  return typeof r.revision === "string" && typeof r.time === "string" && typeof r.result === "string" && (RESULTS as readonly string[]).includes(r.result);
}

export const HISTORY_LIMIT = 10;

/** Results after which the reconciled revision is the live one. */
export function isApplied(result: Result): boolean {
  return result === "applied" || result === "deleted";
}

/** Folds one reconciliation into a status: the last applied revision moves only when it was applied. */
export function record(prev: ClusterStatus | undefined, cluster: string, hostNamespace: string, r: Reconciliation): ClusterStatus {
  const { damagedHistory: _damaged, ...kept } = prev ?? { cluster, hostNamespace, history: [] };
  const next: ClusterStatus = {
    ...kept,
    cluster,
    hostNamespace,
    lastAttemptedRevision: r.revision,
    lastAttemptTime: r.time,
    result: r.result,
    message: maskUrlCredentials(r.message ?? defaultMessage(r)),
    history: [stripUndefined(r.message === undefined ? r : { ...r, message: maskUrlCredentials(r.message) }), ...(prev?.history ?? [])].slice(0, HISTORY_LIMIT),
  };
  if (isApplied(r.result)) {
    next.lastAppliedRevision = r.revision;
    next.lastAppliedTime = r.time;
  }
  return next;
}

function stripUndefined(r: Reconciliation): Reconciliation {
  const { message, ...rest } = r;
  return message === undefined ? rest : { ...rest, message };
}

function defaultMessage(r: Reconciliation): string {
  const c = r.counts;
  return `${c.created} created, ${c.updated} updated, ${c.deleted} deleted, ${c.unchanged} unchanged${c.failed ? `, ${c.failed} failed` : ""}`;
}

/** The string map stored in the status ConfigMap's `data` (and the dir target's status file). */
export function toData(s: ClusterStatus): Record<string, string> {
  const data: Record<string, string> = { cluster: s.cluster, hostNamespace: s.hostNamespace, history: JSON.stringify(s.history) };
  for (const k of ["lastAppliedRevision", "lastAppliedTime", "lastAttemptedRevision", "lastAttemptTime", "result", "message", "owner"] as const) {
    const v = s[k];
    if (v !== undefined) data[k] = v;
  }
  return data;
}

/** Reads a status back; tolerant of missing or damaged fields (a damaged history reads as empty). */
export function fromData(data: Record<string, string> | undefined, fallbackCluster = "", fallbackNamespace = ""): ClusterStatus | undefined {
  if (!data) return undefined;
  let history: Reconciliation[] = [];
  let damaged = 0;
  try {
    const parsed = JSON.parse(data.history ?? "[]") as unknown;
    if (Array.isArray(parsed)) {
      history = parsed.filter(isReconciliation);
      damaged = parsed.length - history.length;
    } else damaged = 1;
  } catch {
    damaged = 1;
  }
  const s: ClusterStatus = { cluster: data.cluster ?? fallbackCluster, hostNamespace: data.hostNamespace ?? fallbackNamespace, history };
  if (damaged > 0) s.damagedHistory = damaged;
  for (const k of ["lastAppliedRevision", "lastAppliedTime", "lastAttemptedRevision", "lastAttemptTime", "message", "owner"] as const) {
    if (data[k] !== undefined) s[k] = data[k];
  }
  if (data.result && (RESULTS as readonly string[]).includes(data.result)) s.result = data.result as Result;
  return s;
}
