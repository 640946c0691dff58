// What each cluster keeps of the host's shared metrics proxy: the host Service its virtual API server reaches the proxy
// through, the Role letting the proxy read its kubeconfig, and the virtual-side Service and APIService.
import type { KubeObject } from "../kube/object.js";
import { METRICS_GROUP, METRICS_VERSION } from "../kube/resources.js";
import type { Values } from "../model/values.js";
import { CLUSTER_DOMAIN, LABELS, SHARED_METRICS_PROXY, sharedMetricsProxyHost } from "../translate/index.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";

/** Spec 2.2 / 8: the metrics integration's port. */
const METRICS_PROXY_PORT = SHARED_METRICS_PROXY.port;
/** Namespace and name of the Service inside the virtual cluster that the APIService points at. */
export const VIRTUAL_SERVICE_NAMESPACE = "kube-system";
export const VIRTUAL_SERVICE_NAME = "vc-metrics-proxy";

/** Which nodes' metrics the cluster sees: those its pods run on, or every host node when it syncs them all. */
export function metricsNodesMode(values: Values): "synced" | "all" {
  const nodes = values.sync.fromHost.nodes;
  return nodes.enabled && nodes.all ? "all" : "synced";
}

export interface MetricsProxySource {
  /** Repository-relative file the objects come from; no source annotations when absent. */
  sourceFile?: string;
  revision?: string;
}

/**
 * The host objects of a cluster's metrics integration, answered by the host's one shared proxy (deploy/metrics-proxy/):
 * the Service `vc-metrics-proxy-<cluster>` (an ExternalName naming the shared proxy's Service; the virtual cluster's
 * ExternalName names this one), and the Role and RoleBinding `vc-metrics-proxy-access-<cluster>` that let the proxy's
 * ServiceAccount read the cluster's kubeconfig Secret `vc-<cluster>` and see whether the cluster's own proxy of
 * before (Deployment `vc-metrics-proxy-<cluster>`) still runs, by name and nothing else. The proxy finds the cluster
 * by its Namespace's label (render/controlPlane.ts).
 */
export function renderMetricsProxy(cluster: string, hostNamespace: string, src: MetricsProxySource = {}): KubeObject[] {
  const ctx: RenderContext = { cluster, hostNamespace, revision: src.revision ?? "" };
  const source = src.sourceFile ?? "";
  const access = names.metricsProxyAccess(cluster);
  const objects: KubeObject[] = [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: controlPlaneMeta(ctx, source, names.metricsProxy(cluster)),
      spec: {
        type: "ExternalName",
        externalName: sharedMetricsProxyHost(),
        ports: [{ name: "https", port: METRICS_PROXY_PORT, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: controlPlaneMeta(ctx, source, access),
      rules: [
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: [names.kubeconfigSecret(cluster)],
          verbs: ["get"],
        },
        {
          apiGroups: ["apps"],
          resources: ["deployments"],
          resourceNames: [names.metricsProxy(cluster)],
          verbs: ["get"],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: controlPlaneMeta(ctx, source, access),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: access },
      subjects: [
        { kind: "ServiceAccount", name: SHARED_METRICS_PROXY.name, namespace: SHARED_METRICS_PROXY.namespace },
      ],
    },
  ];
  if (src.sourceFile === undefined) for (const o of objects) delete o.metadata.annotations;
  return objects;
}

/**
 * The objects the control plane applies inside the virtual cluster: an ExternalName Service
 * `kube-system/vc-metrics-proxy` naming the proxy's host Service, and the APIService
 * `v1beta1.metrics.orch.io` that routes the metrics API to it. The APIService verifies the proxy: it carries no
 * caBundle here because the proxy writes its own CA into it (and keeps it current when the certificate rotates).
 */
export function metricsVirtualObjects(cluster: string, hostNamespace: string): KubeObject[] {
  const labels = { [LABELS.managedBy]: cluster };
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: VIRTUAL_SERVICE_NAME, namespace: VIRTUAL_SERVICE_NAMESPACE, labels },
      spec: {
        type: "ExternalName",
        externalName: `${names.metricsProxy(cluster)}.${hostNamespace}.svc.${CLUSTER_DOMAIN}`,
        ports: [{ name: "https", port: METRICS_PROXY_PORT, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: `${METRICS_VERSION}.${METRICS_GROUP}`, labels },
      spec: {
        group: METRICS_GROUP,
        version: METRICS_VERSION,
        groupPriorityMinimum: 100,
        versionPriority: 100,
        service: { namespace: VIRTUAL_SERVICE_NAMESPACE, name: VIRTUAL_SERVICE_NAME, port: METRICS_PROXY_PORT },
      },
    },
  ];
}
