// Explicit adoption: an object vc would create that exists on the host outside the cluster's record is a conflict, never written or pruned.
import { describeRef, objectKey, refOf, type KubeObject } from "../kube/object.js";
import { objectDiff } from "../plan/diff.js";
import { normalizeDesired, normalizeLive } from "../plan/normalize.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import type { Target } from "./types.js";

/** The field managers of a live object (managedFields), sorted; "unknown" when the server recorded none. */
export function managersOf(obj: KubeObject): string[] {
  const entries = Array.isArray(obj.metadata.managedFields) ? (obj.metadata.managedFields as Array<{ manager?: string }>) : [];
  const names = [...new Set(entries.map((e) => e.manager).filter((m): m is string => typeof m === "string" && m !== ""))].sort();
  return names.length > 0 ? names : ["unknown"];
}

/**
 * The plan, blocked when an object it would create already exists on the target without being in the cluster's
 * record (made by someone else, or left by a cluster whose record is gone). Objects taken over on purpose (`vc adopt
 * --take-ownership`) become updates of the live object instead. Asked only of a target that keeps records, and only
 * for creates: a plan without creates costs no request.
 */
export async function blockForeignObjects(target: Target, plan: Plan): Promise<Plan> {
  if (plan.blocked || !target.existingUnrecorded) return plan;
  const creates = plan.changes.filter((c) => c.action === "create");
  if (creates.length === 0) return plan;
  const { foreign, taken } = await target.existingUnrecorded(plan.cluster, creates.map((c) => c.ref));
  if (foreign.length === 0 && taken.length === 0) return plan;
  const takenByKey = new Map(taken.map((o) => [objectKey(o), o]));
  const changes = plan.changes.map((c): PlannedChange => {
    const live = c.action === "create" ? takenByKey.get(objectKey(c.ref)) : undefined;
    if (!live || !c.desired) return c;
    return { action: "update", ref: c.ref, desired: c.desired, live, diff: objectDiff(c.ref, normalizeDesired(c.desired), normalizeLive(live)) };
  });
  const counts = { ...plan.counts, create: plan.counts.create - taken.length, update: plan.counts.update + taken.length };
  const out: Plan = { ...plan, changes, counts };
  if (foreign.length === 0) return out;
  const conflicts = foreign.map((o) => ({ ref: refOf(o), managers: managersOf(o) }));
  out.conflicts = conflicts;
  out.blocked = conflictMessage(plan.cluster, conflicts);
  return out;
}

/** Why nothing of the cluster is applied, naming each foreign object and its managers, and the way to take them over. */
export function conflictMessage(cluster: string, conflicts: NonNullable<Plan["conflicts"]>): string {
  const what = conflicts.map((c) => `${describeRef(c.ref)} (managed by ${c.managers.join(", ")})`).join(", ");
  const names = conflicts.map((c) => takeOwnershipName(c.ref)).join(" ");
  return (
    `conflict: ${what} already exist${conflicts.length === 1 ? "s" : ""} on the host and ${conflicts.length === 1 ? "is" : "are"} not in cluster ${cluster}'s record; ` +
    `vc neither writes nor prunes what it did not create, and applies nothing of cluster ${cluster} while ${conflicts.length === 1 ? "it stands" : "they stand"}. ` +
    `To take ${conflicts.length === 1 ? "it" : "them"} over on purpose: vc adopt ${cluster} --take-ownership ${names}`
  );
}

/** `Kind/namespace/name` (or `Kind/name` cluster-scoped): how --take-ownership names an object. */
export function takeOwnershipName(ref: { kind: string; namespace?: string; name: string }): string {
  return ref.namespace ? `${ref.kind}/${ref.namespace}/${ref.name}` : `${ref.kind}/${ref.name}`;
}
