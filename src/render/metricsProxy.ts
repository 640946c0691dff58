// The metrics proxy of one virtual cluster: its host Deployment, Service, RBAC, and the virtual-side APIService.
import type { KubeObject } from "../kube/object.js";
import { METRICS_GROUP, METRICS_VERSION } from "../kube/resources.js";
import type { Values } from "../model/values.js";
import { CLUSTER_DOMAIN, LABELS } from "../translate/index.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";
import { API_SERVICE_PORT } from "./controlPlane.js";
import { READ_VERBS, RuleSet, renderRoleAndBinding, renderServiceAccount } from "./rbac.js";

/** Spec 2.2 / 8: the metrics integration's port. */
const METRICS_PROXY_PORT = 9001;
const METRICS_PROXY_APP = "vc-metrics-proxy";
const TLS_DIR = "/etc/vc-metrics-proxy/tls";
/** Where the virtual cluster's kubeconfig (host Secret `vc-<cluster>`, key `config`) is mounted in the proxy. */
const VIRTUAL_KUBECONFIG_DIR = "/etc/vc-metrics-proxy/virtual";
/** Namespace and name of the Service inside the virtual cluster that the APIService points at. */
export const VIRTUAL_SERVICE_NAMESPACE = "kube-system";
export const VIRTUAL_SERVICE_NAME = "vc-metrics-proxy";

/**
 * The proxy's requests and limits, declared while the host namespace has a ResourceQuota: a quota on
 * compute makes the host reject pods that declare none. (The proxy stays under 80 MiB resident.)
 */
/** Sized from `npm run bench -- metrics-proxy` (about 70 MiB resident under load, bundled, with the options below). */
const METRICS_PROXY_RESOURCES = {
  requests: { cpu: "50m", memory: "80Mi" },
  limits: { cpu: "500m", memory: "160Mi" },
} as const;

/** V8 options of the proxy's container: 2 MiB semi-spaces keep it near 70 MiB resident instead of about 94 MiB. */
export const METRICS_PROXY_NODE_OPTIONS = "--max-semi-space-size=2";

function metricsProxyPodLabels(cluster: string): Record<string, string> {
  return { release: cluster, app: METRICS_PROXY_APP };
}

/** Key of the kubeconfig in the host Secret `vc-<cluster>` the control plane writes. */
const KUBECONFIG_KEY = "config";

/** The virtual API server as the proxy reaches it: the control plane's Service in the host namespace. */
function virtualServerUrl(cluster: string, hostNamespace: string): string {
  return `https://${names.service(cluster)}.${hostNamespace}.svc:${API_SERVICE_PORT}`;
}

/** The proxy's command line, from its documented flags. */
function metricsProxyArgs(cluster: string, hostNamespace: string, values: Values): string[] {
  const nodes = values.sync.fromHost.nodes;
  return [
    "--cluster",
    cluster,
    "--host-namespace",
    hostNamespace,
    "--listen",
    `:${METRICS_PROXY_PORT}`,
    "--tls-cert",
    `${TLS_DIR}/tls.crt`,
    "--tls-key",
    `${TLS_DIR}/tls.key`,
    "--virtual-kubeconfig",
    `${VIRTUAL_KUBECONFIG_DIR}/${KUBECONFIG_KEY}`,
    "--virtual-server",
    virtualServerUrl(cluster, hostNamespace),
    "--api-group",
    METRICS_GROUP,
    "--host-api-group",
    values.integrations.metricsServer.proxy.hostApiGroup,
    "--cache-ttl",
    values.integrations.metricsServer.proxy.cacheTTL,
    "--nodes",
    nodes.enabled && nodes.all ? "all" : "synced",
  ];
}

function probe(path: string): Record<string, unknown> {
  return { httpGet: { path, port: METRICS_PROXY_PORT, scheme: "HTTPS" }, periodSeconds: 10 };
}

export interface MetricsProxySource {
  /** Repository-relative file the objects come from; no source annotations when absent. */
  sourceFile?: string;
  revision?: string;
}

/**
 * The host objects of a cluster's metrics proxy: ServiceAccount, Role + RoleBinding (host pods and pod
 * metrics in the host namespace), ClusterRole + ClusterRoleBinding (nodes and node metrics), Deployment
 * and Service (port 9001). The TLS Secret `vc-metrics-proxy-tls-<cluster>` is not rendered: it holds key
 * material and is provided on the host (by cert-manager or by hand). The proxy authenticates callers through the
 * virtual API server's front proxy and authorizes them with it, through the kubeconfig the control plane keeps in the
 * host Secret `vc-<cluster>` (mounted, key `config`).
 */
export function renderMetricsProxy(
  cluster: string,
  hostNamespace: string,
  values: Values,
  src: MetricsProxySource = {},
): KubeObject[] {
  const ctx: RenderContext = { cluster, hostNamespace, revision: src.revision ?? "" };
  const source = src.sourceFile ?? "";
  const name = names.metricsProxy(cluster);
  const podLabels = metricsProxyPodLabels(cluster);
  const proxy = values.integrations.metricsServer.proxy;
  const meta = (n: string, clusterScoped = false) =>
    controlPlaneMeta(ctx, source, n, { clusterScoped, labels: podLabels });
  const objects: KubeObject[] = [
    renderServiceAccount(ctx, source, name, podLabels),
    ...renderRoleAndBinding({
      ctx,
      source,
      name,
      serviceAccount: name,
      labels: podLabels,
      rules: new RuleSet().add("", ["pods"], READ_VERBS).add(proxy.hostApiGroup, ["pods"], READ_VERBS).rules(),
    }),
    ...renderRoleAndBinding({
      ctx,
      source,
      name: names.metricsProxyClusterRole(cluster, hostNamespace),
      serviceAccount: name,
      labels: podLabels,
      clusterScoped: true,
      rules: new RuleSet().add("", ["nodes"], READ_VERBS).add(proxy.hostApiGroup, ["nodes"], READ_VERBS).rules(),
    }),
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(name),
      spec: {
        replicas: proxy.replicas,
        selector: { matchLabels: podLabels },
        template: {
          metadata: { labels: podLabels },
          spec: {
            serviceAccountName: name,
            containers: [
              {
                name: "metrics-proxy",
                image: `${proxy.image.repository}:${proxy.image.tag}`,
                imagePullPolicy: proxy.image.pullPolicy,
                args: metricsProxyArgs(cluster, hostNamespace, values),
                env: [{ name: "NODE_OPTIONS", value: METRICS_PROXY_NODE_OPTIONS }],
                ports: [{ name: "https", containerPort: METRICS_PROXY_PORT, protocol: "TCP" }],
                livenessProbe: probe("/healthz"),
                readinessProbe: probe("/readyz"),
                volumeMounts: [
                  { name: "tls", mountPath: TLS_DIR, readOnly: true },
                  { name: "virtual-kubeconfig", mountPath: VIRTUAL_KUBECONFIG_DIR, readOnly: true },
                ],
                resources: {
                  requests: { ...METRICS_PROXY_RESOURCES.requests },
                  limits: { ...METRICS_PROXY_RESOURCES.limits },
                },
              },
            ],
            volumes: [
              { name: "tls", secret: { secretName: names.metricsProxyTls(cluster) } },
              {
                name: "virtual-kubeconfig",
                secret: {
                  secretName: names.kubeconfigSecret(cluster),
                  items: [{ key: KUBECONFIG_KEY, path: KUBECONFIG_KEY }],
                },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(name),
      spec: {
        type: "ClusterIP",
        selector: podLabels,
        ports: [{ name: "https", port: METRICS_PROXY_PORT, targetPort: METRICS_PROXY_PORT, protocol: "TCP" }],
      },
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
