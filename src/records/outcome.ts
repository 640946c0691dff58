// How a cluster's run reads on its record (pure): its result, counts and message, and whether it is worth a write.
import { compareDiagnostics, type Diagnostic } from "../model/diagnostic.js";
import type { SyncResult } from "../plan/types.js";
import { describeLease, type ApplyLease } from "./lease.js";
import type { ClusterStatus, Counts, Reconciliation, Result } from "./status.js";

/** Formats the first errors of a folder as `file:line:col: message`. */
export function describeErrors(diags: readonly Diagnostic[], max = 3): string {
  const errors = diags.filter((d) => d.severity === "error").sort(compareDiagnostics);
  const shown = errors
    .slice(0, max)
    .map((d) => `${d.file}${d.line ? `:${d.line}${d.col ? `:${d.col}` : ""}` : ""}: ${d.message}`);
  return `invalid: ${shown.join("; ")}${errors.length > max ? ` (and ${errors.length - max} more)` : ""}`;
}

function countsOf(sync: SyncResult): Counts {
  const c = sync.counts;
  return { created: c.created, updated: c.updated, deleted: c.deleted, unchanged: c.unchanged, failed: c.failed };
}

/** How the sync of a cluster present in the repository ended, as its status records it. */
export function syncOutcome(sync: SyncResult): { result: Result; counts: Counts; message: string } {
  const counts = countsOf(sync);
  const result: Result = sync.plan.blocked ? "blocked" : !sync.ok ? "failed" : "applied";
  const message = sync.plan.blocked
    ? sync.plan.blocked
    : !sync.ok
      ? `${counts.failed} object(s) failed: ` +
        `${sync.results.find((r) => r.outcome === "failed")?.message ?? "unknown error"}`
      : `${counts.created} created, ${counts.updated} updated, ${counts.deleted} deleted, ${counts.unchanged} ` +
        `unchanged`;
  return { result, counts, message };
}

/**
 * How the sync of a cluster whose folder was removed ended (prune through the guard); `deleted` means it is forgotten.
 */
export function removedOutcome(
  sync: SyncResult,
  revision: string,
): { result: Result; counts: Counts; message: string } {
  const counts = countsOf(sync);
  if (sync.ok && !sync.plan.blocked) {
    const kept = (sync.plan.retained ?? []).filter((k) => k.ref.kind === "Namespace").map((k) => k.ref.name);
    const message =
      sync.plan.changes.length === 0 && kept.length > 0
        ? `cluster folder removed: only its kept Namespace ${kept.join(", ")} is left (namespaces are never ` +
          `pruned: delete it by hand once it is empty)`
        : `cluster folder removed: ${counts.deleted} object(s) pruned`;
    return { result: "deleted", counts, message };
  }
  if (sync.plan.blocked)
    return {
      result: "blocked",
      counts,
      message: `cluster folder removed at ${revision.slice(0, 12)}; ${sync.plan.blocked}`,
    };
  return { result: "failed", counts, message: `cluster folder removed; ${counts.failed} object(s) failed to delete` };
}

/**
 * Whether a run is worth a status write: something was written or failed, the result differs, or (for anything
 * but a clean apply) the message differs. A new revision is recorded when the cluster's folder changed in it
 * (`recordRevision`); a full resync that finds nothing to do writes nothing, even at a newer revision.
 */
export function worthWriting(prev: ClusterStatus | undefined, r: Reconciliation, recordRevision: boolean): boolean {
  const last = prev?.history[0];
  if (!last) return true;
  const c = r.counts;
  if (c.created + c.updated + c.deleted + c.failed > 0) return true;
  if (last.result !== r.result) return true;
  // A change of health is an event worth the record (Progressing → Healthy, → Degraded).
  if (
    r.health !== undefined &&
    (prev?.health !== r.health || (r.health !== "Healthy" && prev?.healthReason !== r.healthReason))
  )
    return true;
  if (recordRevision && last.revision !== r.revision) return true;
  return r.result !== "applied" && last.message !== r.message;
}

/** What a run's entry adds when a run that held the cluster never ended (its lease is gone): recorded over. */
export function interrupted(lease: ApplyLease): string {
  return `the run that held the cluster never ended (${describeLease(lease)}): the host is verified at this revision`;
}
