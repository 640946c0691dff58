// The host side of the metrics API on a real API server: the cluster's pods and a metrics backend registered as the
// host's aggregated metrics API. No kubelet runs here, so the backend behind the APIService is a small HTTPS server
// answering the metrics API for the pods it is given; everything between it and a client (aggregation, routing,
// discovery) is the real server's.
import { expect } from "chai";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedCertificate } from "../support/kube-server/tls.js";
import { waitFor, type RealKube } from "../support/real-kube.js";
import { HOST_NS, hostPod, type PodSpec } from "../metrics-proxy/fixture.js";

/** A host pod and the CPU figure its metrics show. */
export type BackendPod = PodSpec & { cpu: string };

export const PODS: BackendPod[] = [
  { cluster: "a", namespace: "default", name: "web", labels: { app: "web" }, cpu: "11m" },
  { cluster: "a", namespace: "default", name: "db", labels: { app: "db" }, cpu: "12m" },
  { cluster: "a", namespace: "team", name: "web", labels: { app: "web" }, cpu: "13m" },
  { cluster: "b", namespace: "default", name: "web", labels: { app: "web" }, cpu: "21m" },
  { namespace: "default", name: "unsynced", hostName: "unsynced", cpu: "99m" },
];

interface HostPodMetrics {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  timestamp: string;
  window: string;
  containers: Array<{ name: string; usage: { cpu: string; memory: string } }>;
}

/** Label selector of equality terms (`k=v,k2`), as the proxy sends them. */
function matches(labels: Record<string, string>, selector: string | null): boolean {
  if (!selector) return true;
  return selector.split(",").every((term) => {
    const [k, v] = term.split(/==?/) as [string, string | undefined];
    return v === undefined ? k in labels : labels[k] === v;
  });
}

/** The host's metrics API backend (what metrics-server answers), for the pods `pods()` gives (PODS by default). */
export function metricsBackend(dir: string, pods: () => readonly BackendPod[] = () => PODS): Server {
  const now = new Date().toISOString();
  const metricsOf = (p: BackendPod): HostPodMetrics => {
    const pod = hostPod(p) as { metadata: { name: string; namespace: string; labels: Record<string, string> } };
    return {
      metadata: pod.metadata,
      timestamp: now,
      window: "30s",
      containers: [{ name: "main", usage: { cpu: p.cpu, memory: "20Mi" } }],
    };
  };
  const cert = selfSignedCertificate(dir);
  return createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://backend");
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    const base = "/apis/metrics.k8s.io/v1beta1";
    if (url.pathname === base) {
      return send(200, {
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "metrics.k8s.io/v1beta1",
        resources: [
          { name: "pods", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] },
          { name: "nodes", namespaced: false, kind: "NodeMetrics", verbs: ["get", "list"] },
        ],
      });
    }
    const m = /^\/apis\/metrics\.k8s\.io\/v1beta1\/(?:namespaces\/([^/]+)\/)?pods(?:\/([^/]+))?$/.exec(url.pathname);
    if (m) {
      const [, ns, name] = m;
      const selected = pods()
        .map(metricsOf)
        .filter(
          (x) =>
            (!ns || x.metadata.namespace === ns) && matches(x.metadata.labels, url.searchParams.get("labelSelector")),
        );
      if (name) {
        const one = selected.find((x) => x.metadata.name === name);
        return one
          ? send(200, { kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", ...one })
          : send(404, {
              kind: "Status",
              code: 404,
              reason: "NotFound",
              message: `podmetrics.metrics.k8s.io "${name}" not found`,
              details: { name, group: "metrics.k8s.io", kind: "pods" },
            });
      }
      return send(200, {
        kind: "PodMetricsList",
        apiVersion: "metrics.k8s.io/v1beta1",
        metadata: {},
        items: selected.map((x) => ({ kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", ...x })),
      });
    }
    const node = /^\/apis\/metrics\.k8s\.io\/v1beta1\/nodes\/([^/]+)$/.exec(url.pathname);
    if (node)
      return send(404, {
        kind: "Status",
        code: 404,
        reason: "NotFound",
        details: { name: node[1], group: "metrics.k8s.io", kind: "nodes" },
      });
    if (url.pathname === `${base}/nodes`)
      return send(200, { kind: "NodeMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items: [] });
    send(404, { kind: "Status", code: 404, message: "not found" });
  });
}

async function create(kube: RealKube, path: string, body: unknown, exists = false): Promise<void> {
  const res = await kube.request("POST", path, body);
  if (exists && res.status === 409) return;
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
}

/** Creates the pods' host namespaces (those missing) and the pods. */
export async function createPods(kube: RealKube, pods: readonly BackendPod[]): Promise<void> {
  for (const ns of new Set(pods.map((p) => p.hostNamespace ?? HOST_NS)))
    await create(kube, "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, true);
  for (const p of pods) await create(kube, `/api/v1/namespaces/${p.hostNamespace ?? HOST_NS}/pods`, hostPod(p));
}

/** Creates the pods (createPods) and the host's metrics API served by `backend` (already listening). */
export async function installHostMetrics(
  kube: RealKube,
  backend: Server,
  pods: readonly BackendPod[] = PODS,
): Promise<void> {
  const port = (backend.address() as AddressInfo).port;
  await createPods(kube, pods);
  // The host's metrics API, as a metrics server registers it: an APIService backed by a Service. Endpoints may not
  // hold loopback addresses, so the Service is of type ExternalName (localhost), which the aggregator resolves to
  // the name and the Service's port (without --enable-aggregator-routing: endpoint routing refuses ExternalName).
  await create(kube, "/api/v1/namespaces/kube-system/services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "metrics-backend", namespace: "kube-system" },
    spec: { type: "ExternalName", externalName: "localhost", ports: [{ port }] },
  });
  await create(kube, "/apis/apiregistration.k8s.io/v1/apiservices", {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: "v1beta1.metrics.k8s.io" },
    spec: {
      group: "metrics.k8s.io",
      version: "v1beta1",
      service: { namespace: "kube-system", name: "metrics-backend", port },
      insecureSkipTLSVerify: true,
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
  });
  await waitFor(
    async () => (await kube.request("GET", `/apis/metrics.k8s.io/v1beta1/namespaces/${HOST_NS}/pods`)).status === 200,
    "the host metrics API to be served through the aggregator",
    60_000,
  );
}
