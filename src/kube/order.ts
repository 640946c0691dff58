// The order of kinds: namespaces, service accounts and roles, role bindings, secrets and config, services, workloads
// and certificates, mesh.
// Changes are applied in it (deletes in reverse) and rendered output is sorted by it.
import { groupKind, type ObjectRef } from "./object.js";
import { CERT_MANAGER_GROUP, MESH_GROUP } from "./resources.js";

const RBAC = "rbac.authorization.k8s.io";

/** Rank of each group/kind; lower goes first. Unknown kinds go last. */
const RANKS: Record<string, number> = {
  Namespace: 0,
  ServiceAccount: 10,
  [`${RBAC}/ClusterRole`]: 11,
  [`${RBAC}/Role`]: 12,
  // A binding comes a stage after its role: the API server checks a binder without the bind verb against the
  // role's rules, so the role must exist first.
  [`${RBAC}/ClusterRoleBinding`]: 20,
  [`${RBAC}/RoleBinding`]: 21,
  Secret: 30,
  ConfigMap: 31,
  ResourceQuota: 32,
  LimitRange: 33,
  PersistentVolumeClaim: 34,
  Service: 40,
  "apps/StatefulSet": 41,
  "apps/Deployment": 42,
  "apiregistration.k8s.io/APIService": 43,
  // A stage before the Gateways: cert-manager starts issuing the Secret a Gateway's tls.credentialName names.
  [`${CERT_MANAGER_GROUP}/Certificate`]: 49,
  [`${MESH_GROUP}/Gateway`]: 50,
  [`${MESH_GROUP}/DestinationRule`]: 51,
  [`${MESH_GROUP}/VirtualService`]: 52,
};

const UNKNOWN_RANK = 60;

/**
 * The stage of a kind: 0 namespaces, 1 accounts and roles, 2 role bindings, 3 secrets and config, 4 services, workloads
 * and certificates, 5 mesh, 6 other.
 */
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
