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
  /** This source's owner name: recorded on every object; a cluster another source owns is blocked (plan.ownerConflict). */
  owner?: string;
  /** The public hosts other clusters of the same run claim (claims/host-claims.ts runClaims). */
  peers?: ReadonlyMap<string, readonly string[]>;
  /** How `peers` that nobody holds live are decided (default "refuse-all"; the reconciler's pass uses "first-name"). */
  peerTies?: PeerTies;
}

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
  const recorded = await recordCreates(target, plan, opts);
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
  await recordInventory(target, plan, results, opts, record, recorded);
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
  // Namespaces this run creates: in a dry run they do not exist yet, and the server answers NotFound for objects in them.
  const newNamespaces = new Set(
    applies.filter((c) => c.action === "create" && isNamespaceRef(c.ref)).map((c) => c.ref.name),
  );
  for (const stage of stages(applies)) {
    // Unchanged objects are recorded at once: a no-op pass has nothing else, and one task each for a whole fleet costs.
    for (const c of stage) if (c.action === "unchanged") record({ ref: c.ref, action: c.action, outcome: "unchanged" });
    const writesOfStage = stage.filter((c) => c.action !== "unchanged");
    if (writesOfStage.length === 0) continue;
    await mapLimit(writesOfStage, opts.concurrency ?? 8, (c) => applyOne(target, c, opts, newNamespaces, record));
  }
}

/** One create or update (or recreate), its result recorded; a failure's message masked. */
async function applyOne(
  target: Target,
  c: PlannedChange,
  opts: SyncOptions,
  newNamespaces: ReadonlySet<string>,
  record: Tell,
): Promise<void> {
  const outcome: Outcome = c.action === "create" ? "created" : "updated";
  const writes = { dryRun: opts.dryRun };
  try {
    if (c.recreate) {
      const notes = await target.recreate(c.live as KubeObject, c.desired as KubeObject, writes);
      const what = `${opts.dryRun ? "would be recreated" : "recreated"} (immutable ${c.immutable!.join(", ")})`;
      return record({ ref: c.ref, action: c.action, outcome, message: [what, ...notes].join("; ") });
    }
    await target.apply(c.desired as KubeObject, writes);
    record({ ref: c.ref, action: c.action, outcome });
  } catch (err) {
    const ns = c.ref.namespace;
    if (opts.dryRun && ns && newNamespaces.has(ns) && isNamespaceNotFound(err, ns)) {
      return record({
        ref: c.ref,
        action: c.action,
        outcome,
        checked: false,
        message: `would be created (namespace ${ns} does not exist yet, not checked by the server)`,
      });
    }
    const message = maskCredentialsInText(maskSecretValuesIn(messageOf(err), c.desired));
    record({ ref: c.ref, action: c.action, outcome: "failed", message });
  }
}

/** Deletes in reverse stage order, `concurrency` at a time within a stage; an object no longer labelled ours is kept. */
async function deleteStages(
  target: Target,
  plan: Plan,
  deletes: readonly PlannedChange[],
  opts: SyncOptions,
  record: Tell,
): Promise<void> {
  const writes = { dryRun: opts.dryRun };
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
 * Before anything is created, puts what the run will create on the cluster's record (with what it already holds), so
 * that a run cut off half way (a killed process, a lost node) leaves a record naming every object it made: the next
 * run finds them its own, not foreign, and never reads the host namespace, which the tenant writes, as a record
 * (sinks/kube/migrate.ts reads only clusters without one). The record as written (undefined: nothing to write, or a
 * target without records), or why it could not be written: then nothing is applied.
 */
async function recordCreates(target: Target, plan: Plan, opts: SyncOptions): Promise<Set<string> | Error | undefined> {
  if (opts.dryRun || !target.recordInventory || !plan.inventory) return undefined;
  const creates = plan.changes.filter((c) => c.action === "create").map((c) => objectKey(c.ref));
  if (creates.length === 0) return undefined;
  const keys = new Set([...plan.inventory, ...creates]);
  try {
    await target.recordInventory(plan.cluster, hostNamespaceOf(plan), keys);
    return keys;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Puts what the run changed on the cluster's record: the inventory it started from, less what was deleted, plus what
 * was created or taken over (creates that failed are taken out of the record recordCreates wrote). Only a target that
 * keeps records, only when the set differs from the record as last written, never in a dry run.
 */
async function recordInventory(
  target: Target,
  plan: Plan,
  results: readonly ObjectResult[],
  opts: SyncOptions,
  record: (r: ObjectResult) => void,
  written?: ReadonlySet<string>,
): Promise<void> {
  if (opts.dryRun || !target.recordInventory || !plan.inventory) return;
  const before = new Set(plan.inventory);
  const after = new Set(before);
  for (const r of results) {
    const key = objectKey(r.ref);
    if (r.outcome === "deleted") after.delete(key);
    else if (r.outcome === "created" || r.outcome === "updated" || r.outcome === "unchanged") after.add(key);
  }
  const stored = written ?? before;
  if (
    after.size === stored.size &&
    [...after].every((k) => stored.has(k)) &&
    (written || !target.unwrittenRecord?.(plan.cluster))
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
