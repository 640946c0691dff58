// The pipeline for one cluster: its plan against its live objects (blocked when another source holds it), carried out.
import type { KubeObject } from "../kube/object.js";
import { buildPlan, emptyCounts, PlanError } from "../plan/build.js";
import type { ClusterError } from "../plan/format.js";
import type { Plan, SyncResult } from "../plan/types.js";
import type { Target } from "../sinks/types.js";
import { applyPlan, type SyncOptions } from "./apply.js";

/** Why a cluster another source's record holds is refused, and those sources. */
export interface Held {
  message: string;
  sources: string[];
}

/** One unit of work: a cluster of the repository, or one removed from it whose live objects remain. */
export interface FleetCluster {
  name: string;
  desired: KubeObject[];
  live: KubeObject[];
  prune: boolean;
  suspend: boolean;
  /** Recreate objects whose change the server refuses in place (--force or cluster.yaml `force`). */
  force: boolean;
  /** The cluster's folder is gone from the repository. */
  removed: boolean;
  /** Its host namespace, where the repository names it. */
  hostNamespace?: string;
  /** Its record as read with its live objects (a target that keeps records): version (null: none) and a run's lease. */
  record?: { version: string | null; leased: boolean };
}

export interface ClusterPlanOptions {
  allowMassPrune: boolean;
  /**
   * This source's owner name (plan/owner.ts): recorded on every object, and clusters another source owns are left
   * alone.
   */
  owner?: string;
  /** Owners whose clusters this run takes over (`vc adopt --from`). */
  adoptFrom?: string[];
  /** The live objects are the target's records (Target.recorded): plans decide by them, not by labels. */
  recorded?: boolean;
  /**
   * Clusters an older record holds for someone else (Target.heldElsewhere): blocked with the message, nothing planned.
   */
  held?: ReadonlyMap<string, Held>;
}

/** The plan of a cluster another source holds: nothing to change, blocked with why. */
function heldPlan(cluster: string, held: Held): Plan {
  return {
    cluster,
    changes: [],
    counts: emptyCounts(),
    blocked: held.message,
    ...(held.sources.length > 0 ? { ownerConflict: held.sources } : {}),
  };
}

/** Plans every cluster; a cluster that cannot be planned becomes an error and the others go on. */
export function planClusters(
  clusters: readonly FleetCluster[],
  opts: ClusterPlanOptions,
): { plans: Plan[]; errors: ClusterError[] } {
  const plans: Plan[] = [];
  const errors: ClusterError[] = [];
  for (const c of clusters) {
    const held = opts.held?.get(c.name);
    if (held) {
      plans.push(heldPlan(c.name, held));
      continue;
    }
    try {
      const plan = buildPlan(c.name, c.desired, c.live, {
        prune: c.prune,
        allowMassPrune: opts.allowMassPrune,
        force: c.force,
        owner: opts.owner,
        adoptFrom: opts.adoptFrom,
        recorded: opts.recorded,
      });
      if (c.hostNamespace !== undefined) plan.hostNamespace = c.hostNamespace;
      if (c.record) {
        plan.recordVersion = c.record.version;
        if (c.record.leased) plan.recordLeased = true;
      }
      plans.push(plan);
    } catch (err) {
      if (!(err instanceof PlanError)) throw err;
      errors.push({ cluster: c.name, message: err.message });
    }
  }
  return { plans, errors };
}

export interface SyncInput {
  cluster: string;
  hostNamespace: string;
  /** The rendered objects; each carries the inventory label of `cluster`. */
  desired: KubeObject[];
  /** Live inventory already read; when absent, syncCluster lists it. */
  live?: KubeObject[];
}

/**
 * One cluster through plan and apply: reads its live objects (unless given), plans and carries the plan out (from
 * the cluster's record as read with them, on a target that keeps records), then gives up its apply lease.
 */
export async function syncCluster(target: Target, input: SyncInput, opts: SyncOptions): Promise<SyncResult> {
  const started = Date.now();
  // One unit of work: the record read with the live objects is the one the plan carries (read once).
  const own = !target.unitOpen;
  if (own) target.startUnit?.();
  try {
    return await syncUnit(target, input, opts, started);
  } finally {
    if (own) target.endUnit?.();
  }
}

async function syncUnit(target: Target, input: SyncInput, opts: SyncOptions, started: number): Promise<SyncResult> {
  // Across namespaces, not only the host namespace: objects left in a namespace the cluster moved away from are found
  // and pruned.
  const live = input.live ?? (await target.listInventory(input.cluster));
  const desired = target.prepare ? input.desired.map((o) => target.prepare!(o)) : input.desired;
  const claim = { cluster: input.cluster, hostNamespace: input.hostNamespace };
  const held =
    target.heldElsewhere && input.desired.length > 0
      ? (await target.heldElsewhere([claim])).get(input.cluster)
      : undefined;
  const record = target.recorded ? (await target.recordsByCluster?.([input.cluster]))?.get(input.cluster) : undefined;
  const plan: Plan = held
    ? heldPlan(input.cluster, held)
    : buildPlan(input.cluster, desired, live, {
        prune: opts.prune,
        allowMassPrune: opts.allowMassPrune,
        force: opts.force,
        owner: opts.owner,
        recorded: target.recorded,
      });
  plan.hostNamespace ??= input.hostNamespace;
  if (target.recorded && target.recordsByCluster && !held) {
    plan.recordVersion = record?.resourceVersion ?? null;
    if (record?.applying) plan.recordLeased = true;
  }
  try {
    const result = await applyPlan(target, plan, opts);
    return { ...result, durationMs: Date.now() - started };
  } finally {
    // Nothing records this run's status: the cluster's apply lease is given up here.
    if (!opts.dryRun) await target.release?.(input.cluster);
  }
}
