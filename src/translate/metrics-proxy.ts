// The names of the host's shared metrics proxy (deploy/metrics-proxy/) that each cluster's objects point at.
import { DEFAULT_RECORDS_NAMESPACE } from "./keys.js";
import { CLUSTER_DOMAIN } from "./names.js";

/** Where the shared proxy runs and what its host objects are called. */
export const SHARED_METRICS_PROXY = {
  /** The platform's namespace (the reconciler's): tenants write nothing there. */
  namespace: DEFAULT_RECORDS_NAMESPACE,
  /** Its Deployment, Service and ServiceAccount. */
  name: "vc-metrics-proxy",
  /** The ConfigMap in which each replica says which clusters it answers for (model/proxy-status.ts). */
  statusConfigMap: "vc-metrics-proxy-status",
  /** The TLS Secret of its serving certificate (named for `vc-metrics-proxy.kube-system.svc`). */
  tlsSecret: "vc-metrics-proxy-tls",
  /** Port of its Service (spec 2.2 and 8: the metrics integration's port). */
  port: 9001,
} as const;

/** The DNS name a cluster's Service resolves to (an ExternalName): the shared proxy's Service. */
export function sharedMetricsProxyHost(): string {
  return `${SHARED_METRICS_PROXY.name}.${SHARED_METRICS_PROXY.namespace}.svc.${CLUSTER_DOMAIN}`;
}
