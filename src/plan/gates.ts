// The checks that refuse a cluster's plan before anything is written (pure): given what the target says, the plan
// blocked with the reason, or as it was. pipeline/gates.ts asks the target and applies them in one chain for every
// caller.
import { describeRef, objectKey, refOf, type KubeObject } from "../kube/object.js";
import { CERT_MANAGER_GROUP, MESH_GROUP } from "../kube/resources.js";
import { contestMessage, publicHosts, type Contest } from "../claims/host-claims.js";
import { objectDiff } from "./diff.js";
import { normalizeDesired, normalizeLive } from "./normalize.js";
import type { Plan, PlannedChange } from "./types.js";

interface Kind {
  apiVersion: string;
  kind: string;
}

/** The kinds a plan writes (creates and updates): what the target must serve. */
export function writtenKinds(plan: Plan): Kind[] {
  const seen = new Map<string, Kind>();
  for (const c of plan.changes)
    if (c.action === "create" || c.action === "update")
      seen.set(`${c.ref.apiVersion}/${c.ref.kind}`, { apiVersion: c.ref.apiVersion, kind: c.ref.kind });
  return [...seen.values()];
}

/** The plan, blocked when the target does not serve some kinds it writes: nothing of such a cluster is applied. */
export function blockUnserved(plan: Plan, missing: readonly Kind[]): Plan {
  if (missing.length === 0) return plan;
  return {
    ...plan,
    blocked: unservedMessage(plan.cluster, missing),
    unserved: missing.map((k) => `${k.apiVersion}/${k.kind}`),
  };
}

/** One message for all the missing kinds of a cluster, grouped by API group, with what the host needs. */
function unservedMessage(cluster: string, missing: readonly Kind[]): string {
  const byGroup = new Map<string, Kind[]>();
  for (const k of missing) {
    const g = k.apiVersion.split("/")[0]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), k]);
  }
  const parts = [...byGroup]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([group, kinds]) => {
      const names =
        `${[...new Set(kinds.map((k) => k.kind))].sort().join(", ")} ` +
        `(${[...new Set(kinds.map((k) => k.apiVersion))].join(", ")})`;
      return `${names}: ${prerequisite(group, cluster)}`;
    });
  return (
    `the host does not serve ${parts.join("; ")}; nothing of cluster ${cluster} is applied until the host ` +
    `serves them`
  );
}

function prerequisite(group: string, cluster: string): string {
  if (group === MESH_GROUP || group.endsWith(".mesh.io") || group === "mesh.io") {
    return (
      "the mesh's custom resource definitions are missing. The mesh integration needs the mesh installed on the " +
      "host with its CRDs " +
      `(group suffix mesh.io) present, and the host namespace preferably labelled mesh-injection=enabled; install ` +
      `the mesh, or set integrations.mesh.enabled: false in clusters/${cluster}/values.yaml`
    );
  }
  if (group === CERT_MANAGER_GROUP) {
    return (
      "cert-manager's custom resource definitions are missing. The certificate-manager integration needs " +
      "cert-manager installed on the host " +
      `with its CRDs (group ${CERT_MANAGER_GROUP}) and a ClusterIssuer; install cert-manager, or set ` +
      `integrations.certManager.enabled: false in clusters/${cluster}/values.yaml and remove ` +
      `clusters/${cluster}/certificates/`
    );
  }
  return (
    `no CRD or API service on the host provides the group ${group}: install what serves it (its CRDs or ` +
    `aggregated API) first`
  );
}

/** The objects a plan would write that claim public hosts (its creates and updates). */
export function claimingObjects(plan: Plan): KubeObject[] {
  const desired = plan.changes.flatMap((c) => (c.action !== "delete" && c.desired ? [c.desired] : []));
  return desired.some((o) => publicHosts(o).length > 0) ? desired : [];
}

/** The plan, blocked when some public host it claims belongs to another cluster (claims/host-claims.ts lostClaims). */
export function blockContests(plan: Plan, contests: readonly Contest[]): Plan {
  if (contests.length === 0) return plan;
  return { ...plan, blocked: contestMessage(plan.cluster, contests), hostClaims: contests.map((c) => c.host) };
}

/**
 * The plan given the objects it would create that exist on the target outside the cluster's record: objects taken over
 * on purpose (`vc adopt --take-ownership`) become updates of the live object; any other blocks the plan, a conflict.
 */
export function blockForeign(
  plan: Plan,
  found: { foreign: readonly KubeObject[]; taken: readonly KubeObject[] },
): Plan {
  const { foreign, taken } = found;
  if (foreign.length === 0 && taken.length === 0) return plan;
  const takenByKey = new Map(taken.map((o) => [objectKey(o), o]));
  const changes = plan.changes.map((c): PlannedChange => {
    const live = c.action === "create" ? takenByKey.get(objectKey(c.ref)) : undefined;
    if (!live || !c.desired) return c;
    return {
      action: "update",
      ref: c.ref,
      desired: c.desired,
      live,
      diff: objectDiff(c.ref, normalizeDesired(c.desired), normalizeLive(live)),
    };
  });
  const counts = {
    ...plan.counts,
    create: plan.counts.create - taken.length,
    update: plan.counts.update + taken.length,
  };
  const out: Plan = { ...plan, changes, counts };
  if (foreign.length === 0) return out;
  const conflicts = foreign.map((o) => ({ ref: refOf(o), managers: managersOf(o) }));
  out.conflicts = conflicts;
  out.blocked = conflictMessage(plan.cluster, conflicts);
  return out;
}

/** The field managers of a live object (managedFields), sorted; "unknown" when the server recorded none. */
function managersOf(obj: KubeObject): string[] {
  const entries = Array.isArray(obj.metadata.managedFields)
    ? (obj.metadata.managedFields as Array<{ manager?: string }>)
    : [];
  const names = [
    ...new Set(entries.map((e) => e.manager).filter((m): m is string => typeof m === "string" && m !== "")),
  ].sort();
  return names.length > 0 ? names : ["unknown"];
}

/**
 * Why nothing of the cluster is applied, naming each foreign object and its managers, and the way to take them over.
 */
function conflictMessage(cluster: string, conflicts: NonNullable<Plan["conflicts"]>): string {
  const what = conflicts.map((c) => `${describeRef(c.ref)} (managed by ${c.managers.join(", ")})`).join(", ");
  const names = conflicts.map((c) => takeOwnershipName(c.ref)).join(" ");
  return (
    `conflict: ${what} already exist${conflicts.length === 1 ? "s" : ""} on the host and ` +
    `${conflicts.length === 1 ? "is" : "are"} not in cluster ${cluster}'s record; ` +
    `vc neither writes nor prunes what it did not create, and applies nothing of cluster ${cluster} while ` +
    `${conflicts.length === 1 ? "it stands" : "they stand"}. ` +
    `To take ${conflicts.length === 1 ? "it" : "them"} over on purpose: vc adopt ${cluster} --take-ownership ${names}`
  );
}

/** `Kind/namespace/name` (or `Kind/name` cluster-scoped): how --take-ownership names an object. */
export function takeOwnershipName(ref: { kind: string; namespace?: string; name: string }): string {
  return ref.namespace ? `${ref.kind}/${ref.namespace}/${ref.name}` : `${ref.kind}/${ref.name}`;
}
