// What the reconciler keeps of one cluster's outcome in a pass: its health after a change, and its status on the
// record.
import type { KubeObject } from "../kube/object.js";
import type { Health } from "../model/health.js";
import type { SyncResult } from "../plan/types.js";
import type { ClusterOutcome } from "../pipeline/fleet.js";
import type { ApplyLease } from "../records/lease.js";
import { describeErrors, interrupted, removedOutcome, syncOutcome, worthWriting } from "../records/outcome.js";
import {
  pinStatus,
  record,
  ZERO_COUNTS,
  type ClusterStatus,
  type Counts,
  type Reconciliation,
  type Result,
} from "../records/status.js";
import type { StatusStore } from "../records/status-store.js";
import type { Engine } from "../pipeline/engine.js";
import type { Target } from "../sinks/types.js";
import { LABELS } from "../translate/keys.js";
import { validatedOf } from "../validate/digest.js";
import { folderClaims } from "../validate/host-claims.js";

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

type Base = Pick<ClusterRun, "cluster" | "hostNamespace" | "revision">;

/**
 * The run of a cluster from its outcome in the pass: its status written when worth it. `prev` is its last status;
 * `recordRevision`: a new revision alone is worth a write (an incremental pass: the folder changed in it).
 */
export async function settleOutcome(
  ctx: ClusterContext,
  o: ClusterOutcome,
  revision: string,
  prev: ClusterStatus | undefined,
  recordRevision: boolean,
): Promise<ClusterRun> {
  const base: Base = { cluster: o.cluster, hostNamespace: o.hostNamespace || (prev?.hostNamespace ?? ""), revision };
  const time = (ctx.now ?? (() => new Date()))().toISOString();
  const entry = (result: Result, message: string, counts: Counts = { ...ZERO_COUNTS }): Reconciliation => ({
    revision,
    time,
    durationMs: o.durationMs,
    result,
    counts,
    message,
  });
  switch (o.state) {
    case "skipped":
      return { ...base, result: "skipped", message: o.error ?? "", durationMs: o.durationMs, statusWritten: false };
    case "busy":
    // Another run is writing the cluster (its apply lease): nothing written, retried by the next pass.
    case "failed":
      return {
        ...base,
        result: "failed",
        message: o.error ?? "failed",
        durationMs: o.durationMs,
        statusWritten: false,
      };
    case "suspended":
      return finish(ctx, base, prev, entry("suspended", "suspended in cluster.yaml"), undefined, recordRevision, o);
    case "suspended-at-run-time":
      return finish(ctx, base, prev, entry("suspended", `suspended by ${o.by}`), undefined, recordRevision, o);
    case "invalid":
      // A folder valid but not renderable failed, as any other break of its run.
      if (o.loaded?.spec)
        return {
          ...base,
          result: "failed",
          message: o.error ?? "failed",
          durationMs: o.durationMs,
          statusWritten: false,
        };
      return finish(ctx, base, prev, entry("invalid", invalidMessage(o, prev)), undefined, recordRevision, o);
    case "synced":
      return o.removed
        ? settleRemoved(ctx, o, base, prev, entry)
        : settleSynced(ctx, o, base, prev, entry, recordRevision);
  }
}

function invalidMessage(o: ClusterOutcome, prev: ClusterStatus | undefined): string {
  const diagnostics = o.loaded?.diagnostics ?? [];
  const waiting = o.loaded?.rollout?.waiting;
  const why = waiting
    ? `${waiting}: its folder needs the base being rolled out (over its pinned base: ${describeErrors(diagnostics, 1)})`
    : describeErrors(diagnostics);
  return `${why}; ${prev?.lastAppliedRevision ? `revision ${prev.lastAppliedRevision.slice(0, 12)} stays live` : "nothing applied"}`;
}

/** A present cluster that was planned and applied: its health read after a change and until it is Healthy. */
async function settleSynced(
  ctx: ClusterContext,
  o: ClusterOutcome,
  base: Base,
  prev: ClusterStatus | undefined,
  entry: (r: Result, m: string, c?: Counts) => Reconciliation,
  recordRevision: boolean,
): Promise<ClusterRun> {
  const sync = o.sync!;
  const { result, counts, message } = syncOutcome(sync);
  const e = entry(result, message, counts);
  // Health is read after a change and until the cluster is Healthy: a settled fleet's resync costs no reads.
  const changed = counts.created + counts.updated + counts.deleted > 0;
  if (result === "applied" && ctx.health && (changed || prev?.health !== "Healthy")) {
    const h = await ctx.health(base.hostNamespace, o.desired ?? []).catch(() => undefined);
    if (h) Object.assign(e, { health: h.status, ...(h.reason ? { healthReason: h.reason } : {}) });
  }
  return finish(ctx, base, prev, e, sync, recordRevision, o);
}

/**
 * A cluster whose folder is gone: its objects were pruned through the prune guard (deleting all of a cluster's objects
 * is a mass prune and needs --allow-mass-prune); once nothing is left, the cluster is forgotten.
 */
async function settleRemoved(
  ctx: ClusterContext,
  o: ClusterOutcome,
  base: Base,
  prev: ClusterStatus | undefined,
  entry: (r: Result, m: string, c?: Counts) => Reconciliation,
): Promise<ClusterRun> {
  const sync = o.sync!;
  if (sync.plan.ownerConflict && !o.live?.some((obj) => obj.metadata.labels?.[LABELS.owner] === ctx.owner)) {
    // Another source's cluster that this repository does not have: not ours to prune, nor to report.
    return {
      ...base,
      result: "skipped",
      message: `owned by ${sync.plan.ownerConflict.join(", ")}`,
      durationMs: o.durationMs,
      statusWritten: false,
    };
  }
  const { result, counts, message } = removedOutcome(sync, base.revision);
  if (result === "deleted") {
    // Everything pruned (or nothing was left): forget the cluster.
    if (sync.plan.changes.length > 0 || prev)
      await ctx.store.remove(base.cluster, base.hostNamespace).catch(() => undefined);
    return { ...base, result, message, sync, durationMs: o.durationMs, statusWritten: false };
  }
  return finish(ctx, base, prev, entry(result, message, counts), sync, true, o);
}

async function finish(
  ctx: ClusterContext,
  base: Base,
  prev: ClusterStatus | undefined,
  entry: Reconciliation,
  sync: SyncResult | undefined,
  recordRevision: boolean,
  o: ClusterOutcome,
): Promise<ClusterRun> {
  // What the folder's validation gave, with the digest of its inputs: the next reconciler's index takes it from here
  // while the digest matches. A new one is worth a write on its own (once per folder change, or vc upgrade).
  const spec = o.loaded?.valid ? o.loaded.spec : undefined;
  const validated = spec
    ? validatedOf(o.loaded?.digest, spec.settings, spec.mesh.length ? folderClaims(spec) : [])
    : undefined;
  // The status as this run would write it over `prev`; the write folds the run over the status as stored then.
  const fold = (current: ClusterStatus | undefined, gone?: ApplyLease): { status: ClusterStatus; worth: boolean } => {
    const e = gone ? { ...entry, message: `${entry.message ?? ""}; ${interrupted(gone)}` } : entry;
    const status = record(current, base.cluster, base.hostNamespace, e);
    // The base snapshot the cluster is now applied with (rollouts): a pin that moved is worth a write on its own.
    const pin = o.loaded?.rollout;
    if (pin && entry.result === "applied") pinStatus(status, pin);
    const pinMoved = status.base !== current?.base || status.previousBase !== current?.previousBase;
    if (validated) status.validated = validated;
    else delete status.validated;
    const validatedMoved = JSON.stringify(status.validated) !== JSON.stringify(current?.validated);
    if (current?.suspendedBy) status.suspendedBy = current.suspendedBy;
    if (ctx.owner) status.owner = ctx.owner;
    const worth = !!gone || worthWriting(current, entry, recordRevision) || pinMoved || validatedMoved;
    return { status, worth };
  };
  const planned = fold(prev);
  let statusWritten = false;
  let kept = prev ?? planned.status;
  // Another source's cluster: its status is never rewritten (after a sync without conflict, the cluster is ours).
  const othersStatus =
    sync?.plan.ownerConflict !== undefined ||
    (sync === undefined && ctx.owner !== undefined && prev?.owner !== undefined && prev.owner !== ctx.owner);
  if (!othersStatus && (planned.worth || prev?.applying) && ctx.mayWrite()) {
    const written = await ctx.store.update(base.cluster, base.hostNamespace, (current, seen) => {
      const next = fold(current, seen.gone);
      return next.worth ? next.status : undefined;
    });
    if (written) {
      statusWritten = true;
      kept = written;
    }
  }
  return {
    ...base,
    result: entry.result,
    message: entry.message ?? "",
    sync,
    status: kept,
    durationMs: entry.durationMs,
    statusWritten,
  };
}
