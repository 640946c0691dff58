// Carries out a cluster's plan: apply stage by stage, prune in reverse, keep the record in step; per-object results.
import { describeRef, objectKey, type KubeObject } from "../kube/object.js";
import { maskSecretValuesIn } from "../plan/mask.js";
import { maskCredentialsInText } from "../model/secrets.js";
import { stageOf } from "../kube/order.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import { blockPlan } from "./gates.js";
import { mapLimit } from "../util/pool.js";
import { OUTCOMES, type ObjectResult, type Outcome, type SyncResult } from "../plan/types.js";
import type { Target } from "../sinks/types.js";
import type { PeerTies } from "../claims/host-claims.js";
import { replanChange } from "../plan/build.js";
import { describeLease } from "../records/lease.js";

export interface SyncOptions {
  prune: boolean;
  dryRun: boolean;
  allowMassPrune: boolean;
  /** Recreate objects whose update the server refuses (immutable fields) instead of blocking the cluster. */
  force?: boolean;
  /** Writes in flight at once within one ordering stage (default 8). */
  concurrency?: number;
  /** Called after each object is done (progress of long runs). */
  onProgress?: (done: number, total: number, result: ObjectResult) => void;
  /**
   * This source's owner name: recorded on every object; a cluster another source owns is blocked (plan.ownerConflict).
   */
  owner?: string;
  /** The public hosts other clusters of the same run claim (claims/host-claims.ts runClaims). */
  peers?: ReadonlyMap<string, readonly string[]>;
  /** How `peers` that nobody holds live are decided (default "refuse-all"; the reconciler's pass uses "first-name"). */
  peerTies?: PeerTies;
  /**
   * What this run is, as the apply lease on each cluster's record names it (`vc apply` of a revision, the reconciler).
   */
  run?: { via: string; revision?: string };
  /** How long to wait for another run's apply lease on a cluster to end or lapse (default 0: busy at once). */
  lockWaitMs?: number;
  /** Told once when a cluster waits for another run's apply lease, and whose. */
  onWait?: (cluster: string, holder: string) => void;
}

/** The cluster's record changed since its plan was computed (another run wrote it): plan it again, write nothing. */
export class StalePlanError extends Error {
  constructor(readonly cluster: string) {
    super(`cluster ${cluster}: its record changed since it was planned (another run wrote it): planned again`);
  }
}

/** Another run holds the cluster's apply lease (it is writing the cluster): nothing of it was written. */
export class ClusterBusyError extends Error {
  constructor(
    readonly cluster: string,
    readonly holder: string,
  ) {
    super(
      `cluster ${cluster} is being applied by another run (${holder}): nothing of it was written; run again once ` +
        `that run has ended (its lease lapses ${APPLY_LEASE_NOTE})`,
    );
  }
}

/** How a lease of a run that died is seen to have ended, for messages. */
const APPLY_LEASE_NOTE = "15 s after its last renewal, at once when its process on this machine is gone";

/** Tries of one object whose write was refused because it changed since it was planned (each planned again). */
const REPLAN_TRIES = 3;

/**
 * Carries out a plan: creates and updates in order, stage by stage (namespaces, RBAC, config, workloads, mesh),
 * `concurrency` at a time within a stage; then, only when every apply succeeded, deletes in reverse order.
 * A plan blocked by the prune guard changes nothing. Unchanged objects cost no request.
 */
export async function applyPlan(target: Target, planned: Plan, opts: SyncOptions): Promise<SyncResult> {
  const started = Date.now();
  const plan = await blockPlan(target, planned, opts.peers, opts.peerTies);
  const results: ObjectResult[] = [];
  const record = (r: ObjectResult) => {
    results.push(r);
    opts.onProgress?.(results.length, plan.changes.length, r);
  };
  if (plan.blocked) {
    skipAll(plan, blockedWhy(plan), record);
    return finish(plan, results, started, false);
  }
  const recorded = await claimCluster(target, plan, opts);
  if (recorded instanceof Error) {
    const failure = recordFailure(plan.cluster, recorded);
    skipAll(plan, `not applied: ${failure.message}`, record);
    record(failure);
    return finish(plan, results, started, false);
  }
  await applyStages(target, plan, opts, record);
  const deletes = plan.changes.filter((c) => c.action === "delete");
  if (results.some((r) => r.outcome === "failed")) {
    for (const c of deletes)
      record({ ref: c.ref, action: c.action, outcome: "skipped", message: "not pruned: an apply failed in this run" });
  } else {
    await deleteStages(target, plan, deletes, opts, record);
  }
  await recordInventory(target, plan, results, opts, record, recorded !== undefined);
  return finish(plan, results, started, !results.some((r) => r.outcome === "failed"));
}

type Tell = (r: ObjectResult) => void;

/** Why nothing of a blocked plan is applied, in a word for each skipped object. */
function blockedWhy(plan: Plan): string {
  if (plan.unserved)
    return "not applied: the host does not serve some of the cluster's kinds (see the cluster's message)";
  if (plan.hostClaims) return "not applied: another cluster holds one of its public hosts (see the cluster's message)";
  if (plan.changes.some((c) => c.immutable && !c.recreate))
    return "not applied: the plan changes immutable fields (see the cluster's message)";
  return "stopped by the prune guard";
}

/** Every change skipped for one reason (unchanged objects stay unchanged). */
function skipAll(plan: Plan, why: string, record: Tell): void {
  for (const c of plan.changes)
    record({
      ref: c.ref,
      action: c.action,
      outcome: c.action === "unchanged" ? "unchanged" : "skipped",
      message: c.action === "unchanged" ? undefined : why,
    });
}

/** Creates and updates, stage by stage, `concurrency` at a time within a stage. */
async function applyStages(target: Target, plan: Plan, opts: SyncOptions, record: Tell): Promise<void> {
  const applies = plan.changes.filter((c) => c.action !== "delete");
  // Namespaces this run creates: in a dry run they do not exist yet, and the server answers NotFound for objects in
  // them.
  const newNamespaces = new Set(
    applies.filter((c) => c.action === "create" && isNamespaceRef(c.ref)).map((c) => c.ref.name),
  );
  for (const stage of stages(applies)) {
    // Unchanged objects are recorded at once: a no-op pass has nothing else, and one task each for a whole fleet costs.
    for (const c of stage) if (c.action === "unchanged") record({ ref: c.ref, action: c.action, outcome: "unchanged" });
    const writesOfStage = stage.filter((c) => c.action !== "unchanged");
    if (writesOfStage.length === 0) continue;
    await mapLimit(writesOfStage, opts.concurrency ?? 8, (c) =>
      applyOne(target, c, opts, newNamespaces, record, plan.cluster),
    );
  }
}

/**
 * One create or update (or recreate), its result recorded; a failure's message masked. An update carries the live
 * object's resourceVersion it was planned against: refused because the object changed since (409), it is planned again
 * against the object as it is now, never written blind.
 */
async function applyOne(
  target: Target,
  planned: PlannedChange,
  opts: SyncOptions,
  newNamespaces: ReadonlySet<string>,
  record: Tell,
  cluster: string,
): Promise<void> {
  let c = planned;
  const outcome: Outcome = c.action === "create" ? "created" : "updated";
  for (let attempt = 1; ; attempt++) {
    // A create carries nothing: a server-side apply's create path refuses a resourceVersion for some kinds (1.20's
    // Services); it is fenced by the cluster's apply lease alone.
    const precondition = c.action !== "create" && c.resourceVersion ? { resourceVersion: c.resourceVersion } : {};
    const writes = { dryRun: opts.dryRun, cluster, ...precondition };
    try {
      if (c.recreate) {
        const notes = await target.recreate(c.live as KubeObject, c.desired as KubeObject, writes);
        const what = `${opts.dryRun ? "would be recreated" : "recreated"} (immutable ${c.immutable!.join(", ")})`;
        return record({ ref: c.ref, action: planned.action, outcome, message: [what, ...notes].join("; ") });
      }
      await target.apply(c.desired as KubeObject, writes);
      record({ ref: c.ref, action: planned.action, outcome });
      return;
    } catch (err) {
      if (!opts.dryRun && isConflict(err) && target.readObject && attempt < REPLAN_TRIES) {
        // Planned on a state that has changed since: planned again on the object as it is now.
        c = replanChange(c, await target.readObject(c.ref), { force: opts.force || !!planned.recreate });
        const changedSince = "changed since it was planned, by another writer";
        if (c.action === "unchanged")
          return record({
            ref: c.ref,
            action: planned.action,
            outcome: "unchanged",
            message: `${changedSince}: now as desired`,
          });
        if (c.immutable && !c.recreate)
          return record({
            ref: c.ref,
            action: planned.action,
            outcome: "failed",
            message:
              `${changedSince}: the change now needs immutable fields changed (${c.immutable.join(", ")}); ` +
              `run again`,
          });
        continue;
      }
      const ns = c.ref.namespace;
      if (opts.dryRun && ns && newNamespaces.has(ns) && isNamespaceNotFound(err, ns)) {
        return record({
          ref: c.ref,
          action: planned.action,
          outcome,
          checked: false,
          message: `would be created (namespace ${ns} does not exist yet, not checked by the server)`,
        });
      }
      const message = maskCredentialsInText(maskSecretValuesIn(messageOf(err), c.desired));
      record({ ref: c.ref, action: planned.action, outcome: "failed", message });
      return;
    }
  }
}

/** A write the server refused because the object changed (or was created) since it was planned. */
function isConflict(err: unknown): boolean {
  const e = err as { status?: unknown; body?: { reason?: unknown } };
  return e?.status === 409 && (e.body?.reason === "Conflict" || e.body?.reason === "AlreadyExists");
}

/**
 * Deletes in reverse stage order, `concurrency` at a time within a stage; an object no longer labelled ours is kept.
 */
async function deleteStages(
  target: Target,
  plan: Plan,
  deletes: readonly PlannedChange[],
  opts: SyncOptions,
  record: Tell,
): Promise<void> {
  const writes = { dryRun: opts.dryRun, cluster: plan.cluster };
  for (const stage of stages([...deletes])) {
    await mapLimit(stage, opts.concurrency ?? 8, async (c) => {
      try {
        const done = await target.delete(c.live as KubeObject, plan.cluster, writes);
        if (done === "not-owned")
          return record({
            ref: c.ref,
            action: c.action,
            outcome: "skipped",
            message: `${describeRef(c.ref)} no longer carries this cluster's inventory label: not deleted`,
          });
        record({
          ref: c.ref,
          action: c.action,
          outcome: "deleted",
          message: done === "gone" ? "already gone" : undefined,
        });
      } catch (err) {
        record({
          ref: c.ref,
          action: c.action,
          outcome: "failed",
          message: maskSecretValuesIn(messageOf(err), c.live),
        });
      }
    });
  }
}

/**
 * Before anything is written, takes the cluster's apply lease on its record (Target.claim), by compare-and-swap on the
 * record the plan was computed against, and in the same write puts what the run will create on the record (with what
 * it already holds), so that a run cut off half way (a killed process, a lost node) leaves a record naming every
 * object it made and saying that a run never ended: the next run finds the objects its own, not foreign, never reads
 * the host namespace, which the tenant writes, as a record (sinks/kube/migrate.ts reads only clusters without one),
 * and records what the host then has. A plan with nothing to write takes the lease only when the record shows another
 * run's (to wait for it, or take over one whose run is gone). The record changed since the plan: StalePlanError;
 * another run's lease is live: ClusterBusyError. Returns the inventory as written (undefined: no lease taken, or a
 * target without records), or why the record could not be written: then nothing is applied. A target that keeps
 * records without leases gets the inventory written before the creates.
 */
async function claimCluster(target: Target, plan: Plan, opts: SyncOptions): Promise<Set<string> | Error | undefined> {
  if (opts.dryRun || !plan.inventory) return undefined;
  const creates = plan.changes.filter((c) => c.action === "create").map((c) => objectKey(c.ref));
  const keys = new Set([...plan.inventory, ...creates]);
  if (!target.claim || plan.recordVersion === undefined) {
    if (!target.recordInventory || creates.length === 0) return undefined;
    try {
      await target.recordInventory(plan.cluster, hostNamespaceOf(plan), keys);
      return keys;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }
  if (!plan.changes.some((c) => c.action !== "unchanged") && !plan.recordLeased) return undefined;
  let claim: Awaited<ReturnType<NonNullable<Target["claim"]>>>;
  try {
    claim = await target.claim(plan.cluster, hostNamespaceOf(plan), {
      basedOn: plan.recordVersion,
      add: creates,
      run: opts.run ?? { via: "vc" },
      waitMs: opts.lockWaitMs,
      onWait: (holder) => opts.onWait?.(plan.cluster, holder),
    });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
  if (claim.state === "stale") throw new StalePlanError(plan.cluster);
  if (claim.state === "busy") throw new ClusterBusyError(plan.cluster, describeLease(claim.lease));
  return keys;
}

/**
 * Puts what the run changed on the cluster's record: the inventory it started from, less what was deleted, plus what
 * was created or taken over (creates that failed are taken out of the record claimCluster wrote; keys of objects the
 * plan did not find live are dropped). Only a target that keeps records, never in a dry run; after a claim always (the
 * store writes only a set that differs from the record as it is), else only when the set differs from the plan's.
 */
async function recordInventory(
  target: Target,
  plan: Plan,
  results: readonly ObjectResult[],
  opts: SyncOptions,
  record: (r: ObjectResult) => void,
  claimed: boolean,
): Promise<void> {
  if (opts.dryRun || !target.recordInventory || !plan.inventory) return;
  const before = new Set(plan.inventory);
  const after = new Set(before);
  for (const r of results) {
    const key = objectKey(r.ref);
    if (r.outcome === "deleted") after.delete(key);
    else if (r.outcome === "created" || r.outcome === "updated" || r.outcome === "unchanged") after.add(key);
  }
  if (
    !claimed &&
    after.size === before.size &&
    [...after].every((k) => before.has(k)) &&
    !target.unwrittenRecord?.(plan.cluster)
  )
    return;
  try {
    await target.recordInventory(plan.cluster, hostNamespaceOf(plan), after);
  } catch (err) {
    // Without its record vc would not know these objects next time (they would show as conflicts): the run failed.
    record(recordFailure(plan.cluster, err));
  }
}

/** The cluster's host namespace: the plan's, else the Namespace it applies. */
function hostNamespaceOf(plan: Plan): string {
  return (
    plan.hostNamespace ??
    plan.changes.find((c) => c.ref.kind === "Namespace" && c.ref.apiVersion === "v1")?.ref.name ??
    ""
  );
}

/** The result saying the cluster's record could not be written (the run then failed). */
function recordFailure(cluster: string, err: unknown): ObjectResult {
  return {
    ref: { apiVersion: "v1", kind: "ConfigMap", name: `record of cluster ${cluster}` },
    action: "update",
    outcome: "failed",
    message: `vc's record of the cluster could not be written: ${messageOf(err)}`,
  };
}

/** Consecutive changes of the same stage (the list is already in order). */
function stages(changes: PlannedChange[]): PlannedChange[][] {
  const out: PlannedChange[][] = [];
  let last = -1;
  for (const c of changes) {
    const s = stageOf(c.ref);
    if (s !== last || out.length === 0) out.push([]);
    out[out.length - 1]!.push(c);
    last = s;
  }
  return out;
}

function finish(plan: Plan, unordered: ObjectResult[], started: number, ok: boolean): SyncResult {
  // In the plan's order (objects of a stage finish in any order), so that a report is the same on every run.
  const at = new Map(plan.changes.map((c, i) => [objectKey(c.ref), i]));
  const place = (r: ObjectResult) => at.get(objectKey(r.ref)) ?? plan.changes.length;
  const results = unordered
    .map((r, i) => ({ r, i }))
    .sort((a, b) => place(a.r) - place(b.r) || a.i - b.i)
    .map((x) => x.r);
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of results) counts[r.outcome]++;
  return { cluster: plan.cluster, plan, results, counts, ok, durationMs: Date.now() - started };
}

function isNamespaceRef(ref: { apiVersion: string; kind: string }): boolean {
  return ref.kind === "Namespace" && ref.apiVersion === "v1";
}

/** The API server's answer to a write into a namespace that does not exist: 404, details naming that namespace. */
function isNamespaceNotFound(err: unknown, namespace: string): boolean {
  const e = err as { status?: unknown; body?: { details?: { kind?: unknown; name?: unknown } } };
  if (e?.status !== 404) return false;
  const d = e.body?.details;
  return d?.kind === "namespaces"
    ? d.name === namespace
    : messageOf(err).includes(`namespaces "${namespace}" not found`);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
