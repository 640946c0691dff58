// Doctor checks of who may read metrics and nodes (the metrics reader on the configured host group, node syncing), each
// asked of the host's authorizer with a SubjectAccessReview for the exact service account and verb (access.ts).
import { deniedVerbs, type AccessQuestion } from "./access.js";
import { finding } from "./coverage.js";
import { names } from "../../render/meta.js";
import { SHARED_METRICS_PROXY } from "../../translate/metrics-proxy.js";
import {
  configOf,
  hostApiGroupOf,
  metricsIntegrationEnabled,
  metricsProxyDeployment,
  metricsServiceAccount,
  syncerServiceAccount,
} from "./facts.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

type Facts = Pick<HostSnapshot, "cluster" | "namespace" | "values" | "liveValues" | "deployments" | "statefulSet"> &
  Partial<Pick<HostSnapshot, "namespaceObject" | "sharedProxy">>;

const READ = ["get", "list"] as const;

/**
 * What the metrics reader must be allowed: pod metrics in the host namespace and node metrics of `hostApiGroup`; the
 * shared proxy also the cluster's kubeconfig Secret (by name: the Role vc renders grants nothing else).
 */
function metricsWants(s: Facts): Array<Omit<AccessQuestion, "verb">> {
  if (!metricsIntegrationEnabled(s)) return [];
  const group = hostApiGroupOf(s);
  const serviceAccount = metricsServiceAccount(s);
  const values = configOf(s);
  const out: Array<Omit<AccessQuestion, "verb">> = [];
  if (values ? values.integrations.metricsServer.pods : true)
    out.push({ serviceAccount, group, resource: "pods", namespace: s.namespace });
  if (values ? values.integrations.metricsServer.nodes : true) out.push({ serviceAccount, group, resource: "nodes" });
  return out;
}

/** The shared proxy reads the cluster's kubeconfig Secret (get, by name). */
function kubeconfigWant(s: Facts): AccessQuestion[] {
  if (!metricsIntegrationEnabled(s) || metricsProxyDeployment(s)) return [];
  const serviceAccount = metricsServiceAccount(s);
  const name = names.kubeconfigSecret(s.cluster);
  return [{ serviceAccount, verb: "get", group: "", resource: "secrets", namespace: s.namespace, name }];
}

/** With node syncing on, the control plane's service account must read host nodes. */
function nodeWants(s: Facts): Array<Omit<AccessQuestion, "verb">> {
  const values = configOf(s);
  if (
    !values?.integrations.metricsServer.enabled ||
    !values.integrations.metricsServer.nodes ||
    !values.sync.fromHost.nodes.enabled ||
    !s.statefulSet
  )
    return [];
  return [{ serviceAccount: syncerServiceAccount(s), group: "", resource: "nodes" }];
}

/** The questions these checks ask the host (gather.ts sends them). */
export function metricsAccessQuestions(s: Facts): AccessQuestion[] {
  return [
    ...[...metricsWants(s), ...nodeWants(s)].flatMap((q) => READ.map((verb) => ({ ...q, verb }))),
    ...kubeconfigWant(s),
  ];
}

/**
 * The service account reading metrics may get and list pod metrics (host namespace) and node metrics of `hostApiGroup`.
 */
export const metricsRbac: Check = (s) => {
  if (s.unreadable?.access) return [];
  const out: Finding[] = [];
  for (const q of metricsWants(s)) {
    const missing = deniedVerbs(s.access, q, READ);
    if (missing.length === 0) continue;
    const sa = q.serviceAccount;
    const subject = `system:serviceaccount:${sa.namespace}:${sa.name}`;
    const object = `ServiceAccount ${sa.namespace}/${sa.name}`;
    const where = q.namespace ? ` in ${q.namespace}` : "";
    const message = `HTTP 403 Forbidden: ${subject} may not ${missing.join(", ")} ${q.resource}.${q.group}${where}`;
    const shared = sa.namespace === SHARED_METRICS_PROXY.namespace && sa.name === SHARED_METRICS_PROXY.name;
    const how = shared
      ? `apply deploy/metrics-proxy/rbac.yaml: its ClusterRole ${SHARED_METRICS_PROXY.name} lets the shared proxy ` +
        "get and list pods and nodes of metrics.orch.io and metrics.k8s.io " +
        `(add ${q.group} there if the host serves metrics in another group)`
      : q.resource === "pods"
        ? `kubectl -n ${s.namespace} create role vc-metrics-reader --verb=get,list --resource=pods.${q.group} && ` +
          `kubectl -n ${s.namespace} create rolebinding vc-metrics-reader --role=vc-metrics-reader ` +
          `--serviceaccount=${sa.namespace}:${sa.name}`
        : `kubectl create clusterrole vc-node-metrics-reader --verb=get,list --resource=nodes.${q.group} && ` +
          `kubectl create clusterrolebinding vc-node-metrics-reader-${s.cluster} ` +
          `--clusterrole=vc-node-metrics-reader --serviceaccount=${sa.namespace}:${sa.name}`;
    out.push(finding("metrics-forbidden", { check: "metrics-forbidden", severity: "error", object, message }, how));
  }
  for (const q of kubeconfigWant(s)) {
    if (deniedVerbs(s.access, q, ["get"]).length === 0) continue;
    const sa = q.serviceAccount;
    const subject = `system:serviceaccount:${sa.namespace}:${sa.name}`;
    const role = names.metricsProxyAccess(s.cluster);
    out.push(
      finding(
        "metrics-forbidden",
        {
          check: "metrics-forbidden",
          severity: "error",
          object: `Secret ${s.namespace}/${q.name}`,
          message:
            `HTTP 403 Forbidden: ${subject} may not get the cluster's kubeconfig Secret ${q.name}: ` +
            "the shared metrics proxy cannot answer for the cluster",
        },
        `apply the cluster (vc apply --cluster ${s.cluster}): vc renders the Role and RoleBinding ${role} that let it`,
      ),
    );
  }
  return out;
};

/**
 * Node metrics list the right nodes: node syncing is on (a note while it is off) and the control plane may read nodes.
 */
export const nodeMetrics: Check = (s) => {
  const values = configOf(s);
  if (!values?.integrations.metricsServer.enabled || !values.integrations.metricsServer.nodes) return [];
  if (!values.sync.fromHost.nodes.enabled) {
    const message =
      "node syncing is off (sync.fromHost.nodes.enabled: false): the virtual cluster has fake nodes and its node " +
      "metrics list only the nodes its pods run on";
    return [
      finding(
        "node-metrics",
        { check: "node-metrics", severity: "note", object: `StatefulSet ${s.namespace}/${s.cluster}`, message },
        "set sync.fromHost.nodes.enabled: true (and all: true for every host node)",
      ),
    ];
  }
  if (s.unreadable?.access) return [];
  const out: Finding[] = [];
  for (const q of nodeWants(s)) {
    const missing = deniedVerbs(s.access, q, READ);
    if (missing.length === 0) continue;
    const sa = q.serviceAccount;
    const message =
      `node syncing is on but system:serviceaccount:${sa.namespace}:${sa.name} may not ` +
      `${missing.join(", ")} host nodes: no node is synced`;
    const how = `apply the cluster (vc apply --cluster ${s.cluster}) to restore its node ClusterRole and binding`;
    out.push(
      finding(
        "node-metrics",
        { check: "node-metrics", severity: "error", object: `ServiceAccount ${sa.namespace}/${sa.name}`, message },
        how,
      ),
    );
  }
  return out;
};
