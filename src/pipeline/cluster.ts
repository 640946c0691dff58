// Reconciles one cluster at one revision: validity, suspend, render, plan + apply through the prune guard, status.
import { defaultHostNamespace } from "../model/cluster.js";
import { compareDiagnostics, type Diagnostic } from "../model/diagnostic.js";
import type { KubeObject } from "../kube/object.js";
import type { SyncResult, Target } from "../sinks/types.js";
import type { Engine, LoadedCluster } from "./engine.js";
import { pinStatus, record, ZERO_COUNTS, type ClusterStatus, type Counts, type Reconciliation, type Result } from "../records/status.js";
import type { StatusStore } from "../records/status-store.js";
import { LABELS } from "../translate/keys.js";
import type { Health } from "../model/health.js";

export interface ClusterContext {
  engine: Engine;
  target: Target;
  store: StatusStore;
  allowMassPrune: boolean;
  /** Checked before every write: a replica that lost the lease stops writing. */
  mayWrite: () => boolean;
  /** This source's owner name: recorded on every object and status; clusters another source owns are left alone. */
  owner?: string;
  now?: () => Date;
  /**
   * Reads a cluster's health on the host after its run (a live host only): recorded with the run. A failed read leaves
   * the run without health, never fails it.
   */
  health?: (hostNamespace: string, desired: readonly KubeObject[]) => Promise<Health>;
}

export interface ClusterRun {
  cluster: string;
  hostNamespace: string;
  revision: string;
  result: Result | "skipped";
  message: string;
  /** The plan and per-object results, when the cluster was planned. */
  sync?: SyncResult;
  /** The status after this run (undefined when skipped or forgotten). */
  status?: ClusterStatus;
  durationMs: number;
  /** Whether the status was written (unchanged no-op runs write nothing). */
  statusWritten: boolean;
}

/** Formats the first errors of a folder as `file:line:col: message`. */
export function describeErrors(diags: readonly Diagnostic[], max = 3): string {
  const errors = diags.filter((d) => d.severity === "error").sort(compareDiagnostics);
  const shown = errors.slice(0, max).map((d) => `${d.file}${d.line ? `:${d.line}${d.col ? `:${d.col}` : ""}` : ""}: ${d.message}`);
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
      ? `${counts.failed} object(s) failed: ${sync.results.find((r) => r.outcome === "failed")?.message ?? "unknown error"}`
      : `${counts.created} created, ${counts.updated} updated, ${counts.deleted} deleted, ${counts.unchanged} unchanged`;
  return { result, counts, message };
}

/** How the sync of a cluster whose folder was removed ended (prune through the guard); `deleted` means it is forgotten. */
export function removedOutcome(sync: SyncResult, revision: string): { result: Result; counts: Counts; message: string } {
  const counts = countsOf(sync);
  if (sync.ok && !sync.plan.blocked) {
    const kept = (sync.plan.retained ?? []).filter((k) => k.ref.kind === "Namespace").map((k) => k.ref.name);
    const message =
      sync.plan.changes.length === 0 && kept.length > 0
        ? `cluster folder removed: only its kept Namespace ${kept.join(", ")} is left (namespaces are never pruned: delete it by hand once it is empty)`
        : `cluster folder removed: ${counts.deleted} object(s) pruned`;
    return { result: "deleted", counts, message };
  }
  if (sync.plan.blocked) return { result: "blocked", counts, message: `cluster folder removed at ${revision.slice(0, 12)}; ${sync.plan.blocked}` };
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
  if (r.health !== undefined && (prev?.health !== r.health || (r.health !== "Healthy" && prev?.healthReason !== r.healthReason))) return true;
  if (recordRevision && last.revision !== r.revision) return true;
  return r.result !== "applied" && last.message !== r.message;
}

/**
 * Reconciles a cluster that is present in the repository. `prev` is its last known status (read from the host
 * when the caller has none); `live` its inventory when already listed (full resync).
 */
export async function reconcilePresent(
  ctx: ClusterContext,
  loaded: LoadedCluster,
  revision: string,
  prev: ClusterStatus | undefined,
  live?: KubeObject[],
  recordRevision = true,
  /** The public hosts the other clusters of the pass claim: of claims nobody holds live, the name that sorts first wins. */
  peers?: ReadonlyMap<string, readonly string[]>,
): Promise<ClusterRun> {
  const started = Date.now();
  const time = (ctx.now ?? (() => new Date()))().toISOString();
  const hostNamespace = loaded.spec?.settings.namespace ?? prev?.hostNamespace ?? defaultHostNamespace(loaded.name);
  const base = { cluster: loaded.name, hostNamespace, revision };
  let result: Result;
  let message: string;
  let counts: Counts = { ...ZERO_COUNTS };
  let sync: SyncResult | undefined;

  if (!loaded.spec) {
    result = "invalid";
    message = `${loaded.rollout?.waiting ? `${loaded.rollout.waiting}: its folder needs the base being rolled out (over its pinned base: ${describeErrors(loaded.diagnostics, 1)})` : describeErrors(loaded.diagnostics)}; ${prev?.lastAppliedRevision ? `revision ${prev.lastAppliedRevision.slice(0, 12)} stays live` : "nothing applied"}`;
  } else if (loaded.spec.settings.suspend || prev?.suspendedBy) {
    result = "suspended";
    message = loaded.spec.settings.suspend ? "suspended in cluster.yaml" : `suspended by ${prev!.suspendedBy}`;
  } else {
    if (!ctx.mayWrite()) return skipped(base, started, "not the leader");
    const desired = ctx.engine.render(loaded.spec, revision);
    sync = await ctx.engine.sync(
      ctx.target,
      { cluster: loaded.name, hostNamespace, desired, live },
      { prune: loaded.spec.settings.prune, dryRun: false, allowMassPrune: ctx.allowMassPrune, force: loaded.spec.settings.force ?? false, owner: ctx.owner, peers, peerTies: "first-name" },
    );
    ({ result, counts, message } = syncOutcome(sync));
    // Health is read after a change and until the cluster is Healthy: a settled fleet's resync costs no reads.
    const changed = counts.created + counts.updated + counts.deleted > 0;
    if (result === "applied" && ctx.health && (changed || prev?.health !== "Healthy")) {
      const h = await ctx.health(hostNamespace, desired).catch(() => undefined);
      if (h) return finish(ctx, base, prev, { revision, time, durationMs: Date.now() - started, result, counts, message, health: h.status, ...(h.reason ? { healthReason: h.reason } : {}) }, sync, started, recordRevision, loaded.rollout);
    }
  }
  return finish(ctx, base, prev, { revision, time, durationMs: Date.now() - started, result, counts, message }, sync, started, recordRevision, loaded.rollout);
}

/**
 * A cluster whose folder is gone from the repository: its objects are pruned, but only through the prune
 * guard (deleting all of a cluster's objects is a mass prune and needs --allow-mass-prune).
 */
export async function reconcileRemoved(
  ctx: ClusterContext,
  cluster: string,
  hostNamespace: string,
  revision: string,
  prev: ClusterStatus | undefined,
  live?: KubeObject[],
): Promise<ClusterRun> {
  const started = Date.now();
  const time = (ctx.now ?? (() => new Date()))().toISOString();
  const base = { cluster, hostNamespace, revision };
  if (!ctx.mayWrite()) return skipped(base, started, "not the leader");
  const inventory = live ?? (ctx.owner ? await ctx.target.listInventory(cluster) : undefined);
  const sync = await ctx.engine.sync(ctx.target, { cluster, hostNamespace, desired: [], live: inventory }, { prune: true, dryRun: false, allowMassPrune: ctx.allowMassPrune, owner: ctx.owner });
  if (sync.plan.ownerConflict && !inventory?.some((o) => o.metadata.labels?.[LABELS.owner] === ctx.owner)) {
    // Another source's cluster that this repository does not have: not ours to prune, nor to report.
    return { ...base, result: "skipped", message: `owned by ${sync.plan.ownerConflict.join(", ")}`, durationMs: Date.now() - started, statusWritten: false };
  }
  const { result, counts, message } = removedOutcome(sync, revision);
  if (result === "deleted") {
    // Everything pruned (or nothing was left): forget the cluster.
    if (sync.plan.changes.length > 0 || prev) await ctx.store.remove(cluster, hostNamespace).catch(() => undefined);
    return { ...base, result, message, sync, durationMs: Date.now() - started, statusWritten: false };
  }
  return finish(ctx, base, prev, { revision, time, durationMs: Date.now() - started, result, counts, message }, sync, started);
}

async function finish(
  ctx: ClusterContext,
  base: { cluster: string; hostNamespace: string; revision: string },
  prev: ClusterStatus | undefined,
  entry: Reconciliation,
  sync: SyncResult | undefined,
  started: number,
  recordRevision = true,
  pin?: LoadedCluster["rollout"],
): Promise<ClusterRun> {
  const status = record(prev, base.cluster, base.hostNamespace, entry);
  // The base snapshot the cluster is now applied with (rollouts): a pin that moved is worth a write on its own.
  if (pin && entry.result === "applied") pinStatus(status, pin);
  const pinMoved = status.base !== prev?.base || status.previousBase !== prev?.previousBase;
  if (prev?.suspendedBy) status.suspendedBy = prev.suspendedBy;
  if (ctx.owner) status.owner = ctx.owner;
  let statusWritten = false;
  // Another source's cluster: its status is never rewritten (after a sync without conflict, the cluster is ours).
  const othersStatus = sync?.plan.ownerConflict !== undefined || (sync === undefined && ctx.owner !== undefined && prev?.owner !== undefined && prev.owner !== ctx.owner);
  if (!othersStatus && (worthWriting(prev, entry, recordRevision) || pinMoved) && ctx.mayWrite()) {
    await ctx.store.write(status);
    statusWritten = true;
  }
  const kept = statusWritten ? status : (prev ?? status);
  return { ...base, result: entry.result, message: entry.message ?? "", sync, status: kept, durationMs: Date.now() - started, statusWritten };
}

function skipped(base: { cluster: string; hostNamespace: string; revision: string }, started: number, why: string): ClusterRun {
  return { ...base, result: "skipped", message: why, durationMs: Date.now() - started, statusWritten: false };
}
