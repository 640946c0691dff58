// The metrics proxy against a real host API server: its pod index watches real Pod objects, and it reads pod metrics
// through the host's aggregated metrics API (an APIService routed by the real server). No kubelet runs here, so the
// metrics backend behind the APIService is a small HTTPS server of this test answering the metrics API for the pods
// it is given; everything between it and the proxy (aggregation, routing, discovery, watch) is the real server's.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { silentLogger } from "../../src/log.js";
import { selfSignedCertificate } from "../support/kube-server/tls.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { get, HOST_NS, hostNameOf, hostPod, type PodSpec } from "../metrics-proxy/fixture.js";

const PODS: Array<PodSpec & { cpu: string }> = [
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

/** The host's metrics API backend (what metrics-server answers), for the pods of PODS. */
function metricsBackend(dir: string): Server {
  const now = new Date().toISOString();
  const metrics: HostPodMetrics[] = PODS.map((p) => {
    const pod = hostPod(p) as { metadata: { name: string; namespace: string; labels: Record<string, string> } };
    return { metadata: pod.metadata, timestamp: now, window: "30s", containers: [{ name: "main", usage: { cpu: p.cpu, memory: "20Mi" } }] };
  });
  const cert = selfSignedCertificate(dir);
  return createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://backend");
    const send = (status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    const base = "/apis/metrics.k8s.io/v1beta1";
    if (url.pathname === base) {
      return send(200, { kind: "APIResourceList", apiVersion: "v1", groupVersion: "metrics.k8s.io/v1beta1", resources: [
        { name: "pods", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] },
        { name: "nodes", namespaced: false, kind: "NodeMetrics", verbs: ["get", "list"] },
      ] });
    }
    const m = /^\/apis\/metrics\.k8s\.io\/v1beta1\/(?:namespaces\/([^/]+)\/)?pods(?:\/([^/]+))?$/.exec(url.pathname);
    if (m) {
      const [, ns, name] = m;
      const selected = metrics.filter((x) => (!ns || x.metadata.namespace === ns) && matches(x.metadata.labels, url.searchParams.get("labelSelector")));
      if (name) {
        const one = selected.find((x) => x.metadata.name === name);
        return one ? send(200, { kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", ...one }) : send(404, { kind: "Status", code: 404, message: `podmetrics "${name}" not found` });
      }
      return send(200, { kind: "PodMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items: selected.map((x) => ({ kind: "PodMetrics", apiVersion: "metrics.k8s.io/v1beta1", ...x })) });
    }
    if (url.pathname === `${base}/nodes`) return send(200, { kind: "NodeMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items: [] });
    send(404, { kind: "Status", code: 404, message: "not found" });
  });
}

describe("e2e: the metrics proxy against a real host API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let dir: string;
  let backend: Server;
  let proxy: RunningProxy | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-metrics-"));
    backend = metricsBackend(dir);
    await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
    const port = (backend.address() as AddressInfo).port;
    const create = async (path: string, body: unknown) => {
      const res = await kube().request("POST", path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
    };
    await create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: HOST_NS } });
    for (const p of PODS) await create(`/api/v1/namespaces/${HOST_NS}/pods`, hostPod(p));
    // The host's metrics API, as a metrics server registers it: an APIService backed by a Service. Endpoints may not
    // hold loopback addresses, so the Service is of type ExternalName (localhost), which the aggregator resolves to
    // the name and the Service's port (without --enable-aggregator-routing: endpoint routing refuses ExternalName).
    await create("/api/v1/namespaces/kube-system/services", { apiVersion: "v1", kind: "Service", metadata: { name: "metrics-backend", namespace: "kube-system" }, spec: { type: "ExternalName", externalName: "localhost", ports: [{ port }] } });
    await create("/apis/apiregistration.k8s.io/v1/apiservices", {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: { group: "metrics.k8s.io", version: "v1beta1", service: { namespace: "kube-system", name: "metrics-backend", port }, insecureSkipTLSVerify: true, groupPriorityMinimum: 100, versionPriority: 100 },
    });
    await waitFor(async () => (await kube().request("GET", `/apis/metrics.k8s.io/v1beta1/namespaces/${HOST_NS}/pods`)).status === 200, "the host metrics API to be served through the aggregator", 60_000);
    const config = parseFlags(["--cluster", "a", "--host-namespace", HOST_NS, "--kubeconfig", kube().kubeconfigPath, "--listen", "127.0.0.1:0", "--host-api-group", "metrics.k8s.io"]);
    proxy = await startProxy(config, { log: silentLogger, processMetrics: false, retryMs: 100, syncWaitMs: 5000 });
    expect(await proxy.informer.waitSynced(10_000)).to.equal(true);
  });
  after(async () => {
    await proxy?.close();
    await new Promise((r) => backend?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a namespace's pod metrics with virtual names, only the cluster's pods, from the real host", async () => {
    const res = await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods");
    expect(res.status, res.text).to.equal(200);
    const items = res.body.items as Array<{ metadata: { name: string; namespace: string; labels: Record<string, string> }; containers: Array<{ usage: { cpu: string } }> }>;
    expect(items.map((i) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0]!.usage.cpu}`).sort()).to.deep.equal(["default/db=12m", "default/web=11m"]);
    for (const i of items) expect(Object.keys(i.metadata.labels).some((k) => k.startsWith("vc.orch.io/"))).to.equal(false);
  });

  it("a single pod, all namespaces, and 404 for another cluster's or an unsynced pod", async () => {
    const one = await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/team/pods/web");
    expect(one.status, one.text).to.equal(200);
    expect(one.body.containers[0].usage.cpu).to.equal("13m");
    const all = await get(proxy!, "/apis/metrics.orch.io/v1beta1/pods");
    expect((all.body.items as Array<{ metadata: { name: string } }>).length).to.equal(3);
    expect(all.text).to.not.include("21m").and.not.include("99m").and.not.include(hostNameOf(PODS[0]!));
    expect((await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/unsynced")).status).to.equal(404);
  });

  it("follows the real watch: a pod synced later appears, a deleted one goes", async () => {
    const late: PodSpec = { cluster: "a", namespace: "default", name: "late", labels: { app: "late" } };
    const created = await kube().request("POST", `/api/v1/namespaces/${HOST_NS}/pods`, hostPod(late));
    expect(created.status).to.equal(201);
    const gone = await kube().request("DELETE", `/api/v1/namespaces/${HOST_NS}/pods/${hostNameOf(PODS[1]!)}?gracePeriodSeconds=0`);
    expect(gone.status).to.equal(200);
    await waitFor(async () => (await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/db")).status === 404, "the deleted pod to leave the index", 10_000);
  });
});
