// Doctor checks of the metrics integration on the host: the host's metrics API, the metrics proxy and its TLS Secret,
// the registration of the metrics API service by the control plane.
import { loadAll } from "js-yaml";
import { METRICS_VERSION } from "../../kube/resources.js";
import { INIT_MANIFESTS_KEY } from "../../render/initManifests.js";
import { names } from "../../render/meta.js";
import { ANNOTATIONS } from "../../translate/keys.js";
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
  if (group === UPSTREAM_METRICS_GROUP)
    return `${install} (the configured hostApiGroup ${group} is the upstream metrics server's group), or set integrations.metricsServer.proxy.hostApiGroup to the group your host's metrics server serves`;
  return `${install}, or set integrations.metricsServer.proxy.hostApiGroup to the group it serves (${UPSTREAM_METRICS_GROUP} for the upstream metrics server; ${group} is in use now)`;
}

/** The group the upstream metrics server registers. */
const UPSTREAM_METRICS_GROUP = "metrics.k8s.io";

/** The host serves the metrics group the proxy reads (row "metrics not available": the host metrics server is down). */
export const metricsHostApi: Check = (s) => {
  if (!metricsIntegrationEnabled(s) || s.unreadable?.apiService) return [];
  const name = hostMetricsApiService(s);
  const object = `APIService ${name}`;
  if (!s.metricsApiService) {
    const message = `metrics not available: the host has no APIService ${name}, so no metrics server serves ${hostApiGroupOf(s)} there`;
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

/** The metrics proxy runs: its Deployment has an available replica and its TLS Secret exists. */
export const metricsProxy: Check = (s) => {
  if (!metricsIntegrationEnabled(s)) return [];
  const out: Finding[] = [];
  const name = names.metricsProxy(s.cluster);
  const object = `Deployment ${s.namespace}/${name}`;
  const deployment = metricsProxyDeployment(s) as
    | { spec?: { replicas?: number }; status?: { availableReplicas?: number } }
    | undefined;
  const apply = `apply the cluster (vc apply --cluster ${s.cluster})`;
  if (!deployment) {
    out.push(
      finding(
        "metrics-not-available",
        {
          check: "metrics-proxy",
          severity: "error",
          object,
          message: "the metrics proxy's Deployment does not exist: nothing answers the virtual cluster's metrics API",
        },
        apply,
      ),
    );
  } else {
    const want = deployment.spec?.replicas ?? 1;
    const available = deployment.status?.availableReplicas ?? 0;
    if (want === 0)
      out.push(
        finding(
          "metrics-not-available",
          { check: "metrics-proxy", severity: "error", object, message: "the metrics proxy is scaled to 0 replicas" },
          apply,
        ),
      );
    else if (available === 0)
      out.push(
        finding(
          "metrics-not-available",
          {
            check: "metrics-proxy",
            severity: "error",
            object,
            message: `none of the metrics proxy's ${want} replica(s) is available`,
          },
          `read its pods' state and logs (kubectl -n ${s.namespace} describe deployment ${name})`,
        ),
      );
  }
  const tls = names.metricsProxyTls(s.cluster);
  if (!s.unreadable?.secrets && !s.existingSecrets.includes(`${s.namespace}/${tls}`)) {
    out.push(
      finding(
        "metrics-not-available",
        {
          check: "metrics-proxy-tls",
          severity: "error",
          object: `Secret ${s.namespace}/${tls}`,
          message: `the metrics proxy's TLS Secret ${tls} does not exist: the proxy's pods cannot start (vc does not render it: it holds key material)`,
        },
        `create it with cert-manager or by hand: kubectl -n ${s.namespace} create secret tls ${tls} --cert=tls.crt --key=tls.key`,
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
  const apply = `apply the cluster (vc apply --cluster ${s.cluster}), then restart the control plane (kubectl -n ${s.namespace} delete pod ${s.cluster}-0)`;
  const add = (severity: "error" | "warning", object: string, message: string, how: string) =>
    out.push(finding("metrics-api-service", { check: "metrics-api-service", severity, object, message }, how));
  if (!s.unreadable?.initManifests) {
    if (!s.initManifests)
      add(
        "error",
        `ConfigMap ${s.namespace}/${cm}`,
        `the ConfigMap ${cm} does not exist: the control plane registers the metrics API service (${METRICS_API_SERVICE}) from it when it starts`,
        apply,
      );
    else if (!registersMetricsApi(s.initManifests))
      add(
        "error",
        `ConfigMap ${s.namespace}/${cm}`,
        `the ConfigMap ${cm} (key ${INIT_MANIFESTS_KEY}) holds no APIService ${METRICS_API_SERVICE}: the control plane has nothing to register`,
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
      `the control plane's pod started with an older configuration (${has.slice(0, 12)}) than its StatefulSet's (${want.slice(0, 12)}): the metrics API service is registered only at start`,
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
  const logs = `read the control plane's start-up logs: kubectl -n ${s.namespace} logs ${s.cluster}-0 -c syncer (or vc debug collect ${s.cluster})`;
  if (!registered) {
    const message = `the virtual cluster's API service list has no ${METRICS_API_SERVICE} (asked ${s.virtual.server}): metrics.orch.io is missing there`;
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
      `the metrics proxy (${names.metricsProxy(s.cluster)}) does not answer the virtual API server: see the metrics-proxy findings, and its logs`,
    ),
  ];
};
