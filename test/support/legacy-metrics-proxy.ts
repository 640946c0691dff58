// A cluster's own metrics proxy as vc rendered it before the shared proxy (one Deployment per cluster), to build the
// state of a fleet that hands its clusters over to the shared proxy.
import type { KubeObject } from "../../src/kube/object.js";
import { LABELS } from "../../src/translate/keys.js";

/**
 * The objects vc rendered for a cluster's own proxy: ServiceAccount, Role and binding, ClusterRole and binding,
 * Deployment, Service.
 */
export function legacyMetricsProxy(cluster: string, hostNamespace: string, owner?: string): KubeObject[] {
  const name = `vc-metrics-proxy-${cluster}`;
  const clusterWide = `${name}-x-${hostNamespace}`;
  const labels = {
    release: cluster,
    app: "vc-metrics-proxy",
    [LABELS.managedBy]: cluster,
    [LABELS.inventory]: cluster,
    ...(owner ? { [LABELS.owner]: owner } : {}),
  };
  const podLabels = { release: cluster, app: "vc-metrics-proxy" };
  const meta = (n: string, namespaced = true) => ({
    name: n,
    ...(namespaced ? { namespace: hostNamespace } : {}),
    labels,
  });
  const rbac = "rbac.authorization.k8s.io";
  const subject = [{ kind: "ServiceAccount", name, namespace: hostNamespace }];
  const read = ["get", "list", "watch"];
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(name) },
    {
      apiVersion: `${rbac}/v1`,
      kind: "Role",
      metadata: meta(name),
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: read },
        { apiGroups: ["metrics.orch.io"], resources: ["pods"], verbs: read },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: meta(name),
      roleRef: { apiGroup: rbac, kind: "Role", name },
      subjects: subject,
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRole",
      metadata: meta(clusterWide, false),
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: read },
        { apiGroups: ["metrics.orch.io"], resources: ["nodes"], verbs: read },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: meta(clusterWide, false),
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: clusterWide },
      subjects: subject,
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(name),
      spec: {
        replicas: 1,
        selector: { matchLabels: podLabels },
        template: {
          metadata: { labels: podLabels },
          spec: {
            serviceAccountName: name,
            containers: [
              {
                name: "metrics-proxy",
                image: "ghcr.io/vc-project/metrics-proxy:0.1.0",
                args: [
                  ...["--cluster", cluster, "--host-namespace", hostNamespace, "--listen", ":9001"],
                  ...[
                    "--tls-cert",
                    "/etc/vc-metrics-proxy/tls/tls.crt",
                    "--tls-key",
                    "/etc/vc-metrics-proxy/tls/tls.key",
                  ],
                  ...["--virtual-kubeconfig", "/etc/vc-metrics-proxy/virtual/config"],
                  ...["--virtual-server", `https://${cluster}.${hostNamespace}.svc:443`],
                ],
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
        ports: [{ name: "https", port: 9001, targetPort: 9001, protocol: "TCP" }],
      },
    },
  ];
}
