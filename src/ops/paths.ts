// API paths of the kinds the operations read and write, from the shared resource catalogue.
import { resourceFor, resourcePath } from "../kube/resources.js";

/** The REST path of a kind's collection (namespace given) or of one object (name given). */
export function pathOf(apiVersion: string, kind: string, namespace?: string, name?: string): string {
  const t = resourceFor(apiVersion, kind);
  if (!t) throw new Error(`unknown kind ${apiVersion} ${kind}`);
  return resourcePath(t, namespace, name);
}

export const P = {
  namespace: (name: string) => pathOf("v1", "Namespace", undefined, name),
  pods: (ns: string, name?: string) => pathOf("v1", "Pod", ns, name),
  podLog: (ns: string, name: string) => `${pathOf("v1", "Pod", ns, name)}/log`,
  secrets: (ns: string, name?: string) => pathOf("v1", "Secret", ns, name),
  configMaps: (ns: string, name?: string) => pathOf("v1", "ConfigMap", ns, name),
  events: (ns: string) => pathOf("v1", "Event", ns),
  services: (ns: string, name?: string) => pathOf("v1", "Service", ns, name),
  pvcs: (ns: string, name?: string) => pathOf("v1", "PersistentVolumeClaim", ns, name),
  statefulSets: (ns: string, name?: string) => pathOf("apps/v1", "StatefulSet", ns, name),
  deployments: (ns: string, name?: string) => pathOf("apps/v1", "Deployment", ns, name),
  apiService: (name: string) => pathOf("apiregistration.k8s.io/v1", "APIService", undefined, name),
  roles: (ns: string) => pathOf("rbac.authorization.k8s.io/v1", "Role", ns),
  roleBindings: (ns: string) => pathOf("rbac.authorization.k8s.io/v1", "RoleBinding", ns),
  clusterRoles: () => pathOf("rbac.authorization.k8s.io/v1", "ClusterRole"),
  clusterRoleBindings: () => pathOf("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
  mesh: (kind: "VirtualService" | "DestinationRule" | "Gateway", ns?: string) =>
    pathOf("networking.mesh.io/v1beta1", kind, ns),
  certificates: (ns: string) => pathOf("cert-manager.io/v1", "Certificate", ns),
  /** Pods of every namespace (the ingress gateway pods usually live outside the cluster's namespace). */
  allPods: () => pathOf("v1", "Pod"),
};

/** The registered metrics API service (spec 2.2). */
export const METRICS_API_SERVICE = "v1beta1.metrics.orch.io";
