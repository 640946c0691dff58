// Doctor checks of the metrics integration: the metrics API service on the host and the RBAC it needs.
import { METRICS_GROUP } from "../../kube/resources.js";
import { METRICS_API_SERVICE } from "../paths.js";
import { allowed } from "./rbac.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

/** Whether the metrics integration is on: from the values when known, else from a deployed metrics proxy. */
export function metricsIntegrationEnabled(s: HostSnapshot): boolean {
  if (s.values) return s.values.integrations.metricsServer.enabled;
  return s.deployments.some((d) => d.metadata.name === `vc-metrics-proxy-${s.cluster}`);
}

export const metricsApiService: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || s.unreadable?.apiService) return [];
  const object = `APIService ${METRICS_API_SERVICE}`;
  if (!s.metricsApiService) {
    return [{ check: "metrics-api", severity: "error", object, message: `${METRICS_GROUP} is missing from the API service list`, resolution: "the service is registered at control-plane start; check start-up logs" }];
  }
  const conditions = (s.metricsApiService as { status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } }).status?.conditions ?? [];
  const available = conditions.find((c) => c.type === "Available");
  if (available?.status !== "True") {
    const why = available ? `${available.reason ?? ""}${available.message ? `: ${available.message}` : ""}` : "no Available condition";
    return [{ check: "metrics-api", severity: "error", object, message: `metrics not available (${why})`, resolution: "verify host metrics server runs, verify integration is enabled, restart the control plane" }];
  }
  return [];
};

/** The service account that reads host metrics: the metrics proxy's when it is deployed, else `vc-<name>`. */
export function metricsServiceAccount(s: HostSnapshot): string {
  const proxy = s.deployments.find((d) => d.metadata.name === `vc-metrics-proxy-${s.cluster}`);
  const sa = (proxy as { spec?: { template?: { spec?: { serviceAccountName?: string } } } } | undefined)?.spec?.template?.spec?.serviceAccountName;
  return sa ?? `vc-${s.cluster}`;
}

export const metricsRbac: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || s.unreadable?.rbac) return [];
  const sa = { namespace: s.namespace, name: metricsServiceAccount(s) };
  const subject = `system:serviceaccount:${sa.namespace}:${sa.name}`;
  const out: Finding[] = [];
  const missing = ["get", "list"].filter((verb) => !allowed(s.rbac, sa, METRICS_GROUP, "pods", verb, s.namespace));
  if (missing.length) {
    out.push({
      check: "metrics-forbidden",
      severity: "error",
      object: `ServiceAccount ${sa.namespace}/${sa.name}`,
      message: `HTTP 403 Forbidden: ${subject} may not ${missing.join(", ")} pods.${METRICS_GROUP} in ${s.namespace}`,
      resolution:
        `grant RBAC to the service account: kubectl -n ${s.namespace} create role vc-metrics-reader --verb=get,list --resource=pods.${METRICS_GROUP} && ` +
        `kubectl -n ${s.namespace} create rolebinding vc-metrics-reader --role=vc-metrics-reader --serviceaccount=${sa.namespace}:${sa.name}`,
    });
  }
  const nodesWanted = s.values ? s.values.integrations.metricsServer.nodes : true;
  const nodesMissing = nodesWanted ? ["get", "list"].filter((verb) => !allowed(s.rbac, sa, METRICS_GROUP, "nodes", verb)) : [];
  if (nodesMissing.length) {
    out.push({
      check: "metrics-forbidden",
      severity: "error",
      object: `ServiceAccount ${sa.namespace}/${sa.name}`,
      message: `HTTP 403 Forbidden: ${subject} may not ${nodesMissing.join(", ")} nodes.${METRICS_GROUP}`,
      resolution:
        `grant RBAC to the service account: kubectl create clusterrole vc-node-metrics-reader --verb=get,list --resource=nodes.${METRICS_GROUP} && ` +
        `kubectl create clusterrolebinding vc-node-metrics-reader-${s.cluster} --clusterrole=vc-node-metrics-reader --serviceaccount=${sa.namespace}:${sa.name}`,
    });
  }
  return out;
};
