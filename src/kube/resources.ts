// The catalogue of API resources vc reads or writes: one row per kind, the facts every client and server needs.

export interface ResourceType {
  group: string; // "" for the core group
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Subresources served besides the object itself. */
  subresources?: Array<"status" | "scale" | "log">;
  /** Read-only APIs (the metrics API) accept only get, list and watch. */
  readOnly?: boolean;
}

export function apiVersionOf(t: Pick<ResourceType, "group" | "version">): string {
  return t.group === "" ? t.version : `${t.group}/${t.version}`;
}

export const MESH_GROUP = "networking.mesh.io";
const MESH_VERSION = "v1beta1";
export const MESH_API_VERSION = `${MESH_GROUP}/${MESH_VERSION}`;
/** cert-manager's API (integrations.certManager): Certificates a cluster folder holds under certificates/. */
export const CERT_MANAGER_GROUP = "cert-manager.io";
const CERT_MANAGER_VERSION = "v1";
export const CERT_MANAGER_API_VERSION = `${CERT_MANAGER_GROUP}/${CERT_MANAGER_VERSION}`;
export const METRICS_GROUP = "metrics.orch.io";
export const METRICS_VERSION = "v1beta1";

export const RESOURCES: readonly ResourceType[] = [
  {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    singular: "namespace",
    namespaced: false,
    shortNames: ["ns"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    singular: "node",
    namespaced: false,
    shortNames: ["no"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    singular: "pod",
    namespaced: true,
    shortNames: ["po"],
    subresources: ["status", "log"],
  },
  {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    singular: "service",
    namespaced: true,
    shortNames: ["svc"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    singular: "serviceaccount",
    namespaced: true,
    shortNames: ["sa"],
  },
  { group: "", version: "v1", kind: "Secret", plural: "secrets", singular: "secret", namespaced: true },
  {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    singular: "configmap",
    namespaced: true,
    shortNames: ["cm"],
  },
  {
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    singular: "event",
    namespaced: true,
    shortNames: ["ev"],
  },
  {
    group: "",
    version: "v1",
    kind: "ResourceQuota",
    plural: "resourcequotas",
    singular: "resourcequota",
    namespaced: true,
    shortNames: ["quota"],
    subresources: ["status"],
  },
  {
    group: "",
    version: "v1",
    kind: "LimitRange",
    plural: "limitranges",
    singular: "limitrange",
    namespaced: true,
    shortNames: ["limits"],
  },
  {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    singular: "persistentvolumeclaim",
    namespaced: true,
    shortNames: ["pvc"],
    subresources: ["status"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    plural: "statefulsets",
    singular: "statefulset",
    namespaced: true,
    shortNames: ["sts"],
    subresources: ["status", "scale"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    singular: "replicaset",
    namespaced: true,
    shortNames: ["rs"],
    subresources: ["status", "scale"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    singular: "deployment",
    namespaced: true,
    shortNames: ["deploy"],
    subresources: ["status", "scale"],
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "Role",
    plural: "roles",
    singular: "role",
    namespaced: true,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    singular: "rolebinding",
    namespaced: true,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    singular: "clusterrole",
    namespaced: false,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    singular: "clusterrolebinding",
    namespaced: false,
  },
  { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", singular: "lease", namespaced: true },
  {
    group: "apiregistration.k8s.io",
    version: "v1",
    kind: "APIService",
    plural: "apiservices",
    singular: "apiservice",
    namespaced: false,
    subresources: ["status"],
  },
  {
    group: MESH_GROUP,
    version: MESH_VERSION,
    kind: "VirtualService",
    plural: "virtualservices",
    singular: "virtualservice",
    namespaced: true,
    shortNames: ["vs"],
  },
  {
    group: MESH_GROUP,
    version: MESH_VERSION,
    kind: "DestinationRule",
    plural: "destinationrules",
    singular: "destinationrule",
    namespaced: true,
    shortNames: ["dr"],
  },
  {
    group: MESH_GROUP,
    version: MESH_VERSION,
    kind: "Gateway",
    plural: "gateways",
    singular: "gateway",
    namespaced: true,
    shortNames: ["gw"],
  },
  {
    group: CERT_MANAGER_GROUP,
    version: CERT_MANAGER_VERSION,
    kind: "Certificate",
    plural: "certificates",
    singular: "certificate",
    namespaced: true,
    shortNames: ["cert", "certs"],
    subresources: ["status"],
  },
  {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    kind: "PodMetrics",
    plural: "pods",
    singular: "",
    namespaced: true,
    readOnly: true,
  },
  {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    kind: "NodeMetrics",
    plural: "nodes",
    singular: "",
    namespaced: false,
    readOnly: true,
  },
];

const byKind = new Map(RESOURCES.map((r) => [`${apiVersionOf(r)}/${r.kind}`, r]));

/** The resource type of an apiVersion and kind, or undefined when vc does not know it. */
export function resourceFor(apiVersion: string, kind: string): ResourceType | undefined {
  return byKind.get(`${apiVersion}/${kind}`);
}

/** The REST path of a collection or object: `/api/v1/namespaces/ns/pods/name`, `/apis/apps/v1/statefulsets`. */
export function resourcePath(t: ResourceType, namespace?: string, name?: string): string {
  const base = t.group === "" ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns = t.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${t.plural}${name ? `/${encodeURIComponent(name)}` : ""}`;
}
