// The control plane's simple objects: host Namespace, API Services, ResourceQuota and its LimitRange.
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";
import { API_SERVER_PORT, controlPlanePodLabels } from "./statefulSet.js";
import { metricsNodesMode } from "./metricsProxy.js";
import { LABELS } from "../translate/keys.js";

/** Spec 2.3 rule 3: the label that turns on sidecar injection in the host namespace. */
const MESH_INJECTION_LABEL = "mesh-injection";
/** Port of the Service in front of the virtual API server. */
export const API_SERVICE_PORT = 443;

/**
 * The host Namespace. With the metrics integration on it carries `vc.orch.io/metrics-proxy` (the node mode): the label
 * by which the host's shared metrics proxy finds the cluster, which only the platform writes.
 */
export function renderNamespace(values: Values, ctx: RenderContext, source: string): KubeObject {
  const labels: Record<string, string> = {};
  if (values.integrations.mesh.enabled) labels[MESH_INJECTION_LABEL] = "enabled";
  if (values.integrations.metricsServer.enabled) labels[LABELS.metricsProxy] = metricsNodesMode(values);
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { ...controlPlaneMeta(ctx, source, ctx.hostNamespace, { clusterScoped: true, labels }) },
  };
}

/** The Service `<cluster>` (443 -> 8443) and the headless `<cluster>-headless` the StatefulSet names. */
export function renderServices(ctx: RenderContext, source: string): KubeObject[] {
  const selector = controlPlanePodLabels(ctx.cluster);
  const ports = [{ name: "https", port: API_SERVICE_PORT, targetPort: API_SERVER_PORT, protocol: "TCP" }];
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: controlPlaneMeta(ctx, source, names.service(ctx.cluster)),
      spec: { type: "ClusterIP", selector, ports },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: controlPlaneMeta(ctx, source, names.headlessService(ctx.cluster)),
      spec: { clusterIP: "None", publishNotReadyAddresses: true, selector, ports },
    },
  ];
}

/** The ResourceQuota `vc-<cluster>` when `policies.resourceQuota.enabled`. */
export function renderQuota(values: Values, ctx: RenderContext, source: string): KubeObject | undefined {
  const rq = values.policies.resourceQuota;
  if (!rq.enabled) return undefined;
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: controlPlaneMeta(ctx, source, names.quota(ctx.cluster)),
    spec: { hard: { ...rq.quota } },
  };
}

/**
 * Container defaults of the LimitRange that comes with the quota: a namespace under a quota of requests or
 * limits refuses every pod that does not declare them, synced workload pods included; these fill them in.
 */
const LIMIT_RANGE_DEFAULTS = {
  default: { cpu: "1", memory: "512Mi" },
  defaultRequest: { cpu: "100m", memory: "128Mi" },
} as const;

/** The LimitRange `vc-<cluster>` beside the ResourceQuota, when `policies.resourceQuota.enabled`. */
export function renderLimitRange(values: Values, ctx: RenderContext, source: string): KubeObject | undefined {
  if (!values.policies.resourceQuota.enabled) return undefined;
  return {
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: controlPlaneMeta(ctx, source, names.limitRange(ctx.cluster)),
    spec: {
      limits: [
        {
          type: "Container",
          default: { ...LIMIT_RANGE_DEFAULTS.default },
          defaultRequest: { ...LIMIT_RANGE_DEFAULTS.defaultRequest },
        },
      ],
    },
  };
}
