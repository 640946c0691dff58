// Doctor checks of who may read metrics and nodes: the metrics reader's RBAC on the configured host group, node syncing.
import { finding } from "./coverage.js";
import { configOf, hostApiGroupOf, metricsIntegrationEnabled, metricsServiceAccount, syncerServiceAccount } from "./facts.js";
import { allowed } from "./rbac.js";
import type { Check, Finding } from "./types.js";

/** The service account reading metrics may get and list pod metrics (host namespace) and node metrics of `hostApiGroup`. */
export const metricsRbac: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || s.unreadable?.rbac) return [];
  const group = hostApiGroupOf(s);
  const sa = { namespace: s.namespace, name: metricsServiceAccount(s) };
  const subject = `system:serviceaccount:${sa.namespace}:${sa.name}`;
  const object = `ServiceAccount ${sa.namespace}/${sa.name}`;
  const out: Finding[] = [];
  const values = configOf(s);
  const podsWanted = values ? values.integrations.metricsServer.pods : true;
  const missing = podsWanted ? ["get", "list"].filter((verb) => !allowed(s.rbac, sa, group, "pods", verb, s.namespace)) : [];
  if (missing.length) {
    const message = `HTTP 403 Forbidden: ${subject} may not ${missing.join(", ")} pods.${group} in ${s.namespace}`;
    const how = `kubectl -n ${s.namespace} create role vc-metrics-reader --verb=get,list --resource=pods.${group} && kubectl -n ${s.namespace} create rolebinding vc-metrics-reader --role=vc-metrics-reader --serviceaccount=${sa.namespace}:${sa.name}`;
    out.push(finding("metrics-forbidden", { check: "metrics-forbidden", severity: "error", object, message }, how));
  }
  const nodesWanted = values ? values.integrations.metricsServer.nodes : true;
  const nodesMissing = nodesWanted ? ["get", "list"].filter((verb) => !allowed(s.rbac, sa, group, "nodes", verb)) : [];
  if (nodesMissing.length) {
    const message = `HTTP 403 Forbidden: ${subject} may not ${nodesMissing.join(", ")} nodes.${group}`;
    const how = `kubectl create clusterrole vc-node-metrics-reader --verb=get,list --resource=nodes.${group} && kubectl create clusterrolebinding vc-node-metrics-reader-${s.cluster} --clusterrole=vc-node-metrics-reader --serviceaccount=${sa.namespace}:${sa.name}`;
    out.push(finding("metrics-forbidden", { check: "metrics-forbidden", severity: "error", object, message }, how));
  }
  return out;
};

/** Node metrics list the right nodes: node syncing is on (a note while it is off) and the control plane may read nodes. */
export const nodeMetrics: Check = (s) => {
  const values = configOf(s);
  if (!values || !values.integrations.metricsServer.enabled || !values.integrations.metricsServer.nodes) return [];
  const nodes = values.sync.fromHost.nodes;
  if (!nodes.enabled) {
    const message = "node syncing is off (sync.fromHost.nodes.enabled: false): the virtual cluster has fake nodes and its node metrics list only the nodes its pods run on";
    return [finding("node-metrics", { check: "node-metrics", severity: "note", object: `StatefulSet ${s.namespace}/${s.cluster}`, message }, "set sync.fromHost.nodes.enabled: true (and all: true for every host node)")];
  }
  if (s.unreadable?.rbac || !s.statefulSet) return [];
  const sa = syncerServiceAccount(s);
  const missing = ["get", "list"].filter((verb) => !allowed(s.rbac, sa, "", "nodes", verb));
  if (missing.length === 0) return [];
  const message = `node syncing is on but system:serviceaccount:${sa.namespace}:${sa.name} may not ${missing.join(", ")} host nodes: no node is synced`;
  const how = `apply the cluster (vc apply --cluster ${s.cluster}) to restore its node ClusterRole and binding`;
  return [finding("node-metrics", { check: "node-metrics", severity: "error", object: `ServiceAccount ${sa.namespace}/${sa.name}`, message }, how)];
};
