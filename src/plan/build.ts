// Builds the plan of one cluster: pair desired with live objects, classify, order, and apply the prune guard (pure).
import { groupKind, objectKey, refOf, describeRef, type KubeObject } from "../kube/object.js";
import { ANNOTATIONS, LABELS } from "../translate/keys.js";
import { deepEqual, objectDiff } from "./diff.js";
import { pruneGuard } from "./guard.js";
import { immutableChanges } from "./immutable.js";
import { managedView, normalizeDesired, normalizeLive } from "./normalize.js";
import { otherOwners, ownerConflictMessage, ownerOf, UNOWNED_KEPT, withOwner } from "./owner.js";
import { rankOf } from "../kube/order.js";
import type { Action, Plan, PlanOptions, PlannedChange } from "./types.js";

/** A desired set vc cannot plan (duplicate objects, an object without the cluster's inventory label). */
export class PlanError extends Error {}

export function emptyCounts(): Record<Action, number> {
  return { create: 0, update: 0, delete: 0, unchanged: 0 };
}

/**
 * True when the object carries the inventory label of `cluster`: vc applied it for that cluster, so it may prune it.
 */
function inInventory(obj: KubeObject, cluster: string): boolean {
  return obj.metadata.labels?.[LABELS.inventory] === cluster;
}

/**
 * The plan for one cluster. `live` is the cluster's inventory as read from the target; objects in it without
 * the cluster's inventory label are ignored (never updated as twins, never deleted).
 */
export function buildPlan(
  cluster: string,
  rendered: readonly KubeObject[],
  live: readonly KubeObject[],
  opts: PlanOptions,
): Plan {
  const ignoreRevision = opts.ignoreRevisionOnly ?? true;
  const owned = live.filter((o) => inInventory(o, cluster));
  const owner = opts.owner;
  const adopting = new Set(opts.adoptFrom ?? []);
  if (owner !== undefined && !opts.recorded) {
    const others = otherOwners(owned, owner, adopting);
    if (others.length > 0)
      return {
        cluster,
        changes: [],
        counts: emptyCounts(),
        blocked: ownerConflictMessage(cluster, owner, others),
        ownerConflict: others,
      };
  }
  const desired = owner === undefined ? rendered : rendered.map((o) => withOwner(o, owner));
  const liveByKey = new Map(owned.map((o) => [objectKey(o), o]));
  const seen = new Set<string>();
  const applies: PlannedChange[] = [];
  for (const given of desired) {
    const key = objectKey(given);
    if (seen.has(key)) throw new PlanError(`${describeRef(given)} is rendered twice for cluster ${cluster}`);
    seen.add(key);
    if (!inInventory(given, cluster))
      throw new PlanError(
        `${describeRef(given)} lacks the label ${LABELS.inventory}=${cluster}: vc could not find or prune it later`,
      );
    const twin = liveByKey.get(key);
    // Without an owner of its own, a run neither records nor changes ownership: the live object's owner stays.
    const liveOwner = owner === undefined && twin ? ownerOf(twin) : undefined;
    const obj = liveOwner === undefined ? given : withOwner(given, liveOwner);
    applies.push(changeOf(obj, twin, { ignoreRevision, force: opts.force }));
  }
  sortChanges(applies, false);

  const deletes: PlannedChange[] = [];
  const retained: NonNullable<Plan["retained"]> = [];
  if (opts.prune) {
    for (const [key, obj] of liveByKey) {
      if (seen.has(key)) continue;
      const ref = refOf(obj);
      if (isNamespace(ref)) {
        retained.push({ ref, reason: NAMESPACE_KEPT });
        continue;
      }
      if (owner !== undefined && !opts.recorded && adopting.size === 0 && ownerOf(obj) === undefined) {
        retained.push({ ref, reason: UNOWNED_KEPT });
        continue;
      }
      const versioned = obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {};
      deletes.push(
        withDiff({ action: "delete", ref, live: obj, ...versioned }, () =>
          objectDiff(ref, undefined, normalizeLive(obj)),
        ),
      );
    }
    sortChanges(deletes, true);
  }

  const changes = [...applies, ...deletes];
  const counts = emptyCounts();
  for (const c of changes) counts[c.action]++;
  const plan: Plan = { cluster, changes, counts };
  if (opts.recorded) plan.inventory = [...liveByKey.keys()].sort();
  if (retained.length > 0) plan.retained = retained;
  // Kept namespaces count as going: the guard is about how much of the cluster's desired state disappears. A run
  // that deletes nothing needs no guard: once a removed cluster is pruned down to its kept Namespace, it stays quiet.
  const refused = applies.filter((c) => c.immutable && !c.recreate);
  const going = deletes.length === 0 ? 0 : deletes.length + retained.length;
  const blocked = [
    refused.length > 0 ? refusedMessage(cluster, refused) : undefined,
    pruneGuard(cluster, going, owned.length, opts.allowMassPrune),
  ].filter(Boolean);
  if (blocked.length > 0) plan.blocked = blocked.join("; ");
  return plan;
}

/**
 * The change that brings one live object (undefined: none) to the desired one: create, unchanged or update (with the
 * immutable fields it changes, recreated with force), carrying the live object's resourceVersion.
 */
function changeOf(
  obj: KubeObject,
  twin: KubeObject | undefined,
  opts: { ignoreRevision: boolean; force?: boolean },
): PlannedChange {
  const ref = refOf(obj);
  const want = normalizeDesired(obj);
  if (!twin) return withDiff({ action: "create", ref, desired: obj }, () => objectDiff(ref, want, undefined));
  const resourceVersion = twin.metadata.resourceVersion;
  const versioned = resourceVersion ? { resourceVersion } : {};
  const have = managedView(twin, want, { normalized: true });
  const same =
    deepEqual(want, have) || (opts.ignoreRevision && deepEqual(withoutRevision(want), withoutRevision(have)));
  if (same) return { action: "unchanged", ref, desired: obj, live: twin, ...versioned };
  const change = withDiff({ action: "update", ref, desired: obj, live: twin, ...versioned }, () =>
    objectDiff(ref, want, have),
  );
  const immutable = immutableChanges(want, have, twin);
  if (immutable.length > 0) {
    change.immutable = immutable;
    if (opts.force) change.recreate = true;
  }
  return change;
}

/**
 * A create or update planned again against the object as it is now (its write was refused: the object changed since
 * it was planned, or was created meanwhile): what it takes now, against the new resourceVersion.
 */
export function replanChange(
  change: PlannedChange,
  live: KubeObject | undefined,
  opts: { ignoreRevisionOnly?: boolean; force?: boolean } = {},
): PlannedChange {
  return changeOf(change.desired as KubeObject, live, {
    ignoreRevision: opts.ignoreRevisionOnly ?? true,
    force: opts.force,
  });
}

/** Why a plan with updates the server would refuse is not applied, naming each object and field, and the way out. */
function refusedMessage(cluster: string, refused: readonly PlannedChange[]): string {
  const what = refused.map((c) => `${describeRef(c.ref)} (${c.immutable!.join(", ")})`).join(", ");
  return (
    `cannot update in place: the API server refuses changes of immutable fields of ${what}; vc applies nothing of ` +
    `cluster ${cluster} while it stands. ` +
    `Run vc apply --force to recreate ${refused.length === 1 ? "it" : "them"} (a StatefulSet or Deployment is ` +
    `deleted with propagationPolicy=Orphan: ` +
    `its pods and volume claims stay; claims that grow are expanded where the storage class allows it), ` +
    `or set force: true in clusters/${cluster}/cluster.yaml to let the reconciler do so`
  );
}

/** Why prune never deletes a namespace, shown with each one it keeps. */
const NAMESPACE_KEPT =
  "namespaces are never pruned: deleting one would delete what vc does not own in it (the control plane's volume " +
  "claims, synced pods, other tools' objects); delete it by hand once it is empty";

function isNamespace(ref: { apiVersion: string; kind: string }): boolean {
  return ref.kind === "Namespace" && ref.apiVersion === "v1";
}

/** Sorts in place in apply order (or its reverse), computing each change's rank and group/kind once. */
function sortChanges(changes: PlannedChange[], reverse: boolean): void {
  const keyed = changes.map((c) => ({
    c,
    rank: rankOf(c.ref),
    gk: groupKind(c.ref.apiVersion, c.ref.kind),
    ns: c.ref.namespace ?? "",
  }));
  keyed.sort((a, b) => {
    const r = a.rank - b.rank || cmp(a.gk, b.gk) || cmp(a.ns, b.ns) || cmp(a.c.ref.name, b.c.ref.name);
    return reverse ? -r : r;
  });
  for (let i = 0; i < keyed.length; i++) changes[i] = keyed[i]!.c;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when applying the plan would change something. */
export function hasChanges(plan: Plan): boolean {
  return plan.counts.create + plan.counts.update + plan.counts.delete > 0;
}

/**
 * Gives a change its `diff` as a lazy, cached, enumerable property: printing a plan computes the diffs,
 * applying one (tens of thousands of creates on a first run) never pays for them.
 */
function withDiff(change: PlannedChange, compute: () => string): PlannedChange {
  let cached: string | undefined;
  Object.defineProperty(change, "diff", { enumerable: true, configurable: true, get: () => (cached ??= compute()) });
  return change;
}

function withoutRevision(obj: KubeObject): KubeObject {
  const ann = obj.metadata.annotations;
  if (!ann || !(ANNOTATIONS.revision in ann)) return obj;
  const { [ANNOTATIONS.revision]: _rev, ...rest } = ann;
  return { ...obj, metadata: { ...obj.metadata, annotations: rest } };
}
