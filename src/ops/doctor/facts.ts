// What several doctor checks derive from one snapshot: the configuration in effect, the control plane and the metrics
// proxy.
import { isControlledBy } from "../../health/owned-pods.js";
import type { KubeObject } from "../../kube/object.js";
import { METRICS_GROUP } from "../../kube/resources.js";
import type { Values } from "../../model/values.js";
import { names } from "../../render/meta.js";
import { CHART_APP_LABEL, LABELS } from "../../translate/keys.js";
import { SHARED_METRICS_PROXY } from "../../translate/metrics-proxy.js";
import { asPod, type PodLike } from "../../health/pod-causes.js";
import type { HostSnapshot } from "./types.js";

/**
 * The values the checks go by: the repository's when the cluster folder was found, else those the control plane runs
 * with.
 */
export function configOf(s: Pick<HostSnapshot, "values" | "liveValues">): Values | undefined {
  return s.values ?? s.liveValues;
}

/** The control plane's StatefulSet spec, as far as the checks look. */
export interface StatefulSetSpec {
  replicas?: number;
  template?: {
    metadata?: { annotations?: Record<string, string> };
    spec?: { serviceAccountName?: string; containers?: SyncerContainer[] };
  };
  volumeClaimTemplates?: Array<{ metadata?: { name?: string }; spec?: { storageClassName?: string } }>;
}

export interface SyncerContainer {
  name: string;
  args?: string[];
  livenessProbe?: Partial<Record<"initialDelaySeconds" | "periodSeconds" | "failureThreshold", number>>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

export function statefulSetSpec(s: Pick<HostSnapshot, "statefulSet">): StatefulSetSpec | undefined {
  return (s.statefulSet as { spec?: StatefulSetSpec } | undefined)?.spec;
}

/** The `syncer` container of the control plane's StatefulSet. */
export function syncerContainer(s: HostSnapshot): SyncerContainer | undefined {
  return statefulSetSpec(s)?.template?.spec?.containers?.find((c) => c.name === "syncer");
}

/** The service account the control plane runs as: the StatefulSet's, else `vc-<name>`. */
export function syncerServiceAccount(s: Pick<HostSnapshot, "statefulSet" | "namespace" | "cluster">): {
  namespace: string;
  name: string;
} {
  return {
    namespace: s.namespace,
    name: statefulSetSpec(s)?.template?.spec?.serviceAccountName ?? names.serviceAccount(s.cluster),
  };
}

/** Control-plane pods carry `release=<name>` and `app=<chart app label>` (spec 1.2). */
export function isControlPlane(labels: Record<string, string> | undefined, cluster: string): boolean {
  return labels?.release === cluster && labels?.app === CHART_APP_LABEL;
}

/** The control plane's pod `<name>-<ordinal>`. */
export function controlPlanePod(s: HostSnapshot, ordinal = 0): PodLike | undefined {
  // The StatefulSet's own pod (its UID controls it): the syncer may create a pod of that name while none runs.
  const o = s.pods.find(
    (p) =>
      p.metadata.name === `${names.statefulSet(s.cluster)}-${ordinal}` &&
      (!s.statefulSet?.metadata.uid || isControlledBy(p, s.statefulSet.metadata.uid)),
  );
  return o ? asPod(o) : undefined;
}

/** The virtual cluster's workload pods the syncer put on the host (owned by the cluster, not the control plane). */
export function syncedPods(s: HostSnapshot): PodLike[] {
  return s.pods
    .map(asPod)
    .filter(
      (p) => p.metadata.labels?.[LABELS.managedBy] === s.cluster && !isControlPlane(p.metadata.labels, s.cluster),
    );
}

export function meshEnabled(s: HostSnapshot): boolean {
  const values = configOf(s);
  if (values) return values.integrations.mesh.enabled;
  return s.gateways.length > 0 || s.virtualServices.length > 0;
}

/** The cluster's own metrics proxy of before the shared one (Deployment `vc-metrics-proxy-<name>`), while it runs. */
export function metricsProxyDeployment(s: Pick<HostSnapshot, "deployments" | "cluster">): KubeObject | undefined {
  return s.deployments.find((d) => d.metadata.name === names.metricsProxy(s.cluster));
}

type MetricsFacts = Pick<HostSnapshot, "values" | "liveValues" | "deployments" | "cluster"> &
  Partial<Pick<HostSnapshot, "namespaceObject" | "sharedProxy">>;

/**
 * Whether the metrics integration is on: from the values when known, else from the host Namespace's mark for the shared
 * proxy or a cluster's own proxy still running.
 */
export function metricsIntegrationEnabled(s: MetricsFacts): boolean {
  const values = configOf(s);
  if (values) return values.integrations.metricsServer.enabled;
  return (
    s.namespaceObject?.metadata.labels?.[LABELS.metricsProxy] !== undefined || metricsProxyDeployment(s) !== undefined
  );
}

function proxyContainer(d: KubeObject | undefined): { args?: string[] } | undefined {
  return (d as { spec?: { template?: { spec?: { containers?: Array<{ args?: string[] }> } } } } | undefined)?.spec
    ?.template?.spec?.containers?.[0];
}

/** A flag's value in a proxy Deployment's arguments (`--flag value` or `--flag=value`). */
function flagOf(d: KubeObject | undefined, flag: string): string | undefined {
  const args = proxyContainer(d)?.args ?? [];
  const at = args.indexOf(flag);
  return at >= 0 ? args[at + 1] : args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

/**
 * The host's metrics API group the proxy reads: the shared proxy's `--host-api-group` when it was read, else that of
 * the cluster's own proxy of before, else the values' `integrations.metricsServer.proxy.hostApiGroup`, else the
 * default.
 */
export function hostApiGroupOf(s: MetricsFacts): string {
  return (
    flagOf(s.sharedProxy?.deployment, "--host-api-group") ||
    flagOf(metricsProxyDeployment(s), "--host-api-group") ||
    configOf(s)?.integrations.metricsServer.proxy.hostApiGroup ||
    METRICS_GROUP
  );
}

/**
 * The service account that reads host metrics: the cluster's own proxy's while it runs, else the shared proxy's
 * (deploy/metrics-proxy/serviceaccount.yaml).
 */
export function metricsServiceAccount(s: Pick<HostSnapshot, "deployments" | "cluster" | "namespace">): {
  namespace: string;
  name: string;
} {
  const proxy = metricsProxyDeployment(s);
  const sa = (proxy as { spec?: { template?: { spec?: { serviceAccountName?: string } } } } | undefined)?.spec?.template
    ?.spec?.serviceAccountName;
  if (sa) return { namespace: s.namespace, name: sa };
  return { namespace: SHARED_METRICS_PROXY.namespace, name: SHARED_METRICS_PROXY.name };
}
