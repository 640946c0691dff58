// The order of kinds: namespaces, service accounts and RBAC, secrets and config, services and workloads, mesh.
// Changes are applied in it (deletes in reverse) and rendered output is sorted by it.
import { groupKind, type ObjectRef } from "./object.js";
import { MESH_GROUP } from "./resources.js";

const RBAC = "rbac.authorization.k8s.io";

/** Rank of each group/kind; lower goes first. Unknown kinds go last. */
const RANKS: Record<string, number> = {
  Namespace: 0,
  ServiceAccount: 10,
  [`${RBAC}/ClusterRole`]: 11,
  [`${RBAC}/Role`]: 12,
  [`${RBAC}/ClusterRoleBinding`]: 13,
  [`${RBAC}/RoleBinding`]: 14,
  Secret: 20,
  ConfigMap: 21,
  ResourceQuota: 22,
  LimitRange: 23,
  PersistentVolumeClaim: 24,
  Service: 30,
  "apps/StatefulSet": 31,
  "apps/Deployment": 32,
  "apiregistration.k8s.io/APIService": 33,
  [`${MESH_GROUP}/Gateway`]: 40,
  [`${MESH_GROUP}/DestinationRule`]: 41,
  [`${MESH_GROUP}/VirtualService`]: 42,
};

const UNKNOWN_RANK = 50;

/** The stage of a kind: 0 namespaces, 1 accounts and RBAC, 2 secrets and config, 3 services and workloads, 4 mesh, 5 other. */
export function stageOf(ref: Pick<ObjectRef, "apiVersion" | "kind">): number {
  return Math.floor(rankOf(ref) / 10);
}

export function rankOf(ref: Pick<ObjectRef, "apiVersion" | "kind">): number {
  return RANKS[groupKind(ref.apiVersion, ref.kind)] ?? UNKNOWN_RANK;
}

/** Compares refs for apply order: rank, then kind, namespace and name (deterministic). */
export function compareRefs(a: ObjectRef, b: ObjectRef): number {
  return (
    rankOf(a) - rankOf(b) ||
    cmp(groupKind(a.apiVersion, a.kind), groupKind(b.apiVersion, b.kind)) ||
    cmp(a.namespace ?? "", b.namespace ?? "") ||
    cmp(a.name, b.name)
  );
}

/** Delete order: the reverse of apply order. */
export function compareRefsForDelete(a: ObjectRef, b: ObjectRef): number {
  return compareRefs(b, a);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
