// Doctor checks of the metrics integration on the host: the host's metrics API, the shared metrics proxy (its
// Deployment, TLS Secret and what it says of the cluster), the registration of the metrics API service by the control
// plane.
import { loadAll } from "js-yaml";
import { METRICS_VERSION } from "../../kube/resources.js";
import { INIT_MANIFESTS_KEY } from "../../render/initManifests.js";
import { names } from "../../render/meta.js";
import { freshStatuses } from "../../model/proxy-status.js";
import { ANNOTATIONS } from "../../translate/keys.js";
import { SHARED_METRICS_PROXY } from "../../translate/metrics-proxy.js";
import { METRICS_API_SERVICE } from "../paths.js";
import { finding } from "./coverage.js";
import {
  controlPlanePod,
  hostApiGroupOf,
  metricsIntegrationEnabled,
  metricsProxyDeployment,
  statefulSetSpec,
  syncerContainer,
} from "./facts.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

/** The host's APIService of the metrics group the proxy reads. */
export function hostMetricsApiService(
  s: Pick<HostSnapshot, "values" | "liveValues" | "deployments" | "cluster">,
): string {
  return `${METRICS_VERSION}.${hostApiGroupOf(s)}`;
}

/** Whether an APIService reports `Available: True`. */
export function apiServiceAvailable(o: unknown): boolean {
  return (
    (o as { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined)?.status?.conditions ?? []
  ).some((c) => c.type === "Available" && c.status === "True");
}

/** What to do when the host serves no metrics in `group`: never the setting already in use. */
function hostApiFix(group: string): string {
  const install = "install the host's metrics server";
  const flag = "the shared metrics proxy's --host-api-group (deploy/metrics-proxy/deployment.yaml)";
  if (group === UPSTREAM_METRICS_GROUP)
    return (
      `${install} (the configured hostApiGroup ${group} is the upstream metrics server's group), ` +
      `or set ${flag} to the group your host's metrics server serves`
    );
  return (
    `${install}, or set ${flag} to the group it serves ` +
    `(${UPSTREAM_METRICS_GROUP} for the upstream metrics server; ${group} is in use now)`
  );
}

/** The group the upstream metrics server registers. */
const UPSTREAM_METRICS_GROUP = "metrics.k8s.io";

/** The host serves the metrics group the proxy reads (row "metrics not available": the host metrics server is down). */
export const metricsHostApi: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || s.unreadable?.apiService) return [];
  const name = hostMetricsApiService(s);
  const object = `APIService ${name}`;
  if (!s.metricsApiService) {
    const message =
      `metrics not available: the host has no APIService ${name}, so no metrics server serves ` +
      `${hostApiGroupOf(s)} there`;
    return [
      finding(
        "metrics-not-available",
        { check: "metrics-host-api", severity: "error", object, message },
        hostApiFix(hostApiGroupOf(s)),
      ),
    ];
  }
  if (apiServiceAvailable(s.metricsApiService)) return [];
  const conditions =
    (
      s.metricsApiService as {
        status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
      }
    ).status?.conditions ?? [];
  const available = conditions.find((c) => c.type === "Available");
  const why = available
    ? `${available.reason ?? available.status}${available.message ? `: ${available.message}` : ""}`
    : "no Available condition";
  return [
    finding("metrics-not-available", {
      check: "metrics-host-api",
      severity: "error",
      object,
      message: `metrics not available (${why})`,
    }),
  ];
};

/**
 * The metrics proxy answers for the cluster: the host's shared proxy has an available replica, its TLS Secret exists,
 * and its replicas' status does not say it cannot answer for the cluster (and why); a cluster's own proxy of before
 * that still runs is noted with what its hand-over waits for.
 */
export const metricsProxy: Check = (s) => {
  if (!metricsIntegrationEnabled(s)) return [];
  const out: Finding[] = [];
  const { namespace: ns, name } = SHARED_METRICS_PROXY;
  const object = `Deployment ${ns}/${name}`;
  const key = `${s.namespace}/${s.cluster}`;
  const shared = s.unreadable?.sharedProxy ? undefined : s.sharedProxy;
  const statuses = freshStatuses(
    (shared?.status as { data?: Record<string, unknown> } | undefined)?.data,
    Date.parse(s.checkedAt ?? "") || Date.now(),
  );
  const error = (check: string, what: string, message: string, how: string) =>
    out.push(finding("metrics-not-available", { check, severity: "error", object: what, message }, how));
  if (shared) {
    const deployment = shared.deployment as
      | { spec?: { replicas?: number }; status?: { availableReplicas?: number } }
      | undefined;
    if (!deployment)
      error(
        "metrics-proxy",
        object,
        "the host's shared metrics proxy does not exist: nothing answers the virtual cluster's metrics API",
        "deploy it: kubectl apply -k deploy/metrics-proxy (docs/metrics-proxy.md)",
      );
    else if ((deployment.spec?.replicas ?? 1) === 0)
      error("metrics-proxy", object, "the host's shared metrics proxy is scaled to 0 replicas", "scale it to 2");
    else if ((deployment.status?.availableReplicas ?? 0) === 0)
      error(
        "metrics-proxy",
        object,
        `none of the shared metrics proxy's ${deployment.spec?.replicas ?? 1} replica(s) is available`,
        `read its pods' state and logs (kubectl -n ${ns} describe deployment ${name})`,
      );
    else if (statuses.length === 0)
      out.push(
        finding(
          "metrics-not-available",
          {
            check: "metrics-proxy",
            severity: "warning",
            object: `ConfigMap ${ns}/${SHARED_METRICS_PROXY.statusConfigMap}`,
            message:
              "the shared metrics proxy publishes no current status: whether it answers for the cluster is not known",
          },
          `read its logs (kubectl -n ${ns} logs deployment/${name}); it needs get and patch of that ConfigMap`,
        ),
      );
    for (const why of new Set(statuses.map((st) => st.failed[key]).filter((w) => w !== undefined)))
      error(
        "metrics-proxy",
        object,
        `the shared metrics proxy cannot answer for the cluster: ${why}`,
        "fix what it names; it tries again every minute",
      );
    if (!shared.tlsSecret)
      error(
        "metrics-proxy-tls",
        `Secret ${ns}/${SHARED_METRICS_PROXY.tlsSecret}`,
        `the shared metrics proxy's TLS Secret ${SHARED_METRICS_PROXY.tlsSecret} does not exist: ` +
          "its pods cannot start (vc does not render it: it holds key material)",
        "create it with cert-manager or by hand, naming vc-metrics-proxy.kube-system.svc: " +
          `kubectl -n ${ns} create secret tls ${SHARED_METRICS_PROXY.tlsSecret} --cert=tls.crt --key=tls.key`,
      );
  }
  const legacy = metricsProxyDeployment(s);
  if (legacy) {
    const waiting = statuses.map((st) => st.waiting[key]).find((w) => w !== undefined);
    out.push(
      finding(
        "metrics-not-available",
        {
          check: "metrics-proxy",
          severity: "note",
          object: `Deployment ${s.namespace}/${legacy.metadata.name}`,
          message:
            "the cluster's own metrics proxy of before still runs: vc hands the cluster over to the shared proxy " +
            `once that answers for it${waiting ? ` (waiting: ${waiting})` : ""}`,
        },
        "apply the cluster with --prune once the shared proxy is deployed " +
          `(vc apply --cluster ${s.cluster} --prune); nothing else is needed`,
      ),
    );
  }
  return out;
};

/** Whether the init manifests' text holds the metrics APIService. */
function registersMetricsApi(configMap: unknown): boolean {
  const text = (configMap as { data?: Record<string, string> } | undefined)?.data?.[INIT_MANIFESTS_KEY] ?? "";
  try {
    return loadAll(text, { maxAliases: 100 }).some(
      (d) =>
        (d as { kind?: string; metadata?: { name?: string } } | null)?.kind === "APIService" &&
        (d as { metadata?: { name?: string } }).metadata?.name === METRICS_API_SERVICE,
    );
  } catch {
    return false;
  }
}

/** The control plane can register the metrics API service at start (row "Metrics API service absent"). */
export const metricsApiService: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || !s.statefulSet) return [];
  const out: Finding[] = [];
  const cm = names.initManifests(s.cluster);
  const apply =
    `apply the cluster (vc apply --cluster ${s.cluster}), then restart the control plane (kubectl -n ` +
    `${s.namespace} delete pod ${s.cluster}-0)`;
  const add = (severity: "error" | "warning", object: string, message: string, how: string) =>
    out.push(finding("metrics-api-service", { check: "metrics-api-service", severity, object, message }, how));
  if (!s.unreadable?.initManifests) {
    if (!s.initManifests)
      add(
        "error",
        `ConfigMap ${s.namespace}/${cm}`,
        `the ConfigMap ${cm} does not exist: the control plane registers the metrics API service ` +
          `(${METRICS_API_SERVICE}) from it when it starts`,
        apply,
      );
    else if (!registersMetricsApi(s.initManifests))
      add(
        "error",
        `ConfigMap ${s.namespace}/${cm}`,
        `the ConfigMap ${cm} (key ${INIT_MANIFESTS_KEY}) holds no APIService ${METRICS_API_SERVICE}: the control ` +
          `plane has nothing to register`,
        apply,
      );
  }
  const syncer = syncerContainer(s);
  if (syncer && !(syncer.args ?? []).some((a) => a.startsWith("--init-manifests"))) {
    add(
      "error",
      `StatefulSet ${s.namespace}/${s.cluster}`,
      "the control plane is not started with --init-manifests: it registers no metrics API service",
      apply,
    );
  }
  const want = statefulSetSpec(s)?.template?.metadata?.annotations?.[ANNOTATIONS.configHash];
  const pod = controlPlanePod(s);
  const has = pod?.metadata.annotations?.[ANNOTATIONS.configHash];
  if (pod && want && has && want !== has) {
    add(
      "warning",
      `Pod ${s.namespace}/${pod.metadata.name}`,
      `the control plane's pod started with an older configuration (${has.slice(0, 12)}) than its StatefulSet's ` +
        `(${want.slice(0, 12)}): the metrics API service is registered only at start`,
      `restart the control plane: kubectl -n ${s.namespace} delete pod ${pod.metadata.name}`,
    );
  }
  return out;
};

/**
 * The virtual cluster's own APIService list (read through its API server) has the metrics API service, Available
 * (row "Metrics API service absent from the API service list"; an unavailable one is "metrics not available").
 */
export const virtualMetricsApi: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || !s.virtual) return [];
  const object = `APIService ${METRICS_API_SERVICE} (virtual cluster)`;
  const registered = s.virtual.apiServices.find((a) => a.metadata.name === METRICS_API_SERVICE);
  const logs =
    `read the control plane's start-up logs: kubectl -n ${s.namespace} logs ${s.cluster}-0 -c syncer ` +
    `(or vc debug collect ${s.cluster})`;
  if (!registered) {
    const message =
      `the virtual cluster's API service list has no ${METRICS_API_SERVICE} (asked ` +
      `${s.virtual.server}): metrics.orch.io is missing there`;
    return [finding("metrics-api-service", { check: "metrics-api-service", severity: "error", object, message }, logs)];
  }
  if (apiServiceAvailable(registered)) return [];
  const available = (
    (
      registered as {
        status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
      }
    ).status?.conditions ?? []
  ).find((c) => c.type === "Available");
  const why = available
    ? `${available.reason ?? available.status}${available.message ? `: ${available.message}` : ""}`
    : "no Available condition";
  const message = `metrics not available: the virtual cluster's ${METRICS_API_SERVICE} is not Available (${why})`;
  return [
    finding(
      "metrics-not-available",
      { check: "metrics-virtual-api", severity: "error", object, message },
      `the shared metrics proxy (${SHARED_METRICS_PROXY.namespace}/${SHARED_METRICS_PROXY.name}) does not answer ` +
        "the virtual API server: see the metrics-proxy findings, and its logs",
    ),
  ];
};
