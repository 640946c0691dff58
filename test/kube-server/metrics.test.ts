// The read-only metrics API over HTTP: both groups, pod/node labels for selectors, single gets, 404, 405, 503 and
// discovery.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call } from "./helpers.js";

describe("kube-server: metrics API", () => {
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", "other"] });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "default", labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "x" }] },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "db-1", namespace: "default", labels: { app: "db" } },
      spec: { containers: [{ name: "db", image: "x" }] },
    });
    server.put({ apiVersion: "v1", kind: "Node", metadata: { name: "n1", labels: { pool: "a" } } });
    server.setPodMetrics("default", "web-1", [{ name: "app", usage: { cpu: "10m", memory: "1Mi" } }], {
      timestamp: "2026-01-01T00:00:00Z",
      window: "15s",
    });
    server.setPodMetrics("default", "db-1", [{ name: "db", usage: { cpu: "20m", memory: "2Mi" } }]);
    server.setPodMetrics("other", "lonely", [{ name: "c", usage: { cpu: "1m", memory: "1Mi" } }]);
    server.setNodeMetrics("n1", { cpu: "1", memory: "1Gi" });
    server.setNodeMetrics("n2", { cpu: "2", memory: "2Gi" });
  });
  after(async () => server.close());

  for (const group of ["metrics.orch.io", "metrics.k8s.io"]) {
    it(`serves pod metrics under ${group} with upstream shapes and the pod's labels`, async () => {
      const one = await call(server, "GET", `/apis/${group}/v1beta1/namespaces/default/pods/web-1`);
      expect(one.status).to.equal(200);
      expect(one.body).to.deep.include({
        kind: "PodMetrics",
        apiVersion: `${group}/v1beta1`,
        timestamp: "2026-01-01T00:00:00Z",
        window: "15s",
      });
      expect(one.body.metadata).to.include({ name: "web-1", namespace: "default" });
      expect(one.body.metadata.labels).to.deep.equal({ app: "web" });
      expect(one.body.containers).to.deep.equal([{ name: "app", usage: { cpu: "10m", memory: "1Mi" } }]);
      const selected = await call(
        server,
        "GET",
        `/apis/${group}/v1beta1/namespaces/default/pods?labelSelector=app%3Ddb`,
      );
      expect(selected.body.kind).to.equal("PodMetricsList");
      expect(selected.body.items.map((i: any) => i.metadata.name)).to.deep.equal(["db-1"]);
      const all = await call(server, "GET", `/apis/${group}/v1beta1/pods`);
      expect(all.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).to.deep.equal([
        "default/db-1",
        "default/web-1",
        "other/lonely",
      ]);
    });
  }

  it("serves node metrics with node labels, and 404 for unknown objects", async () => {
    const nodes = await call(server, "GET", "/apis/metrics.orch.io/v1beta1/nodes?labelSelector=pool%3Da");
    expect(nodes.body.kind).to.equal("NodeMetricsList");
    expect(nodes.body.items).to.have.length(1);
    expect(nodes.body.items[0]).to.deep.include({ kind: "NodeMetrics", usage: { cpu: "1", memory: "1Gi" } });
    expect((await call(server, "GET", "/apis/metrics.orch.io/v1beta1/nodes/n2")).body.usage).to.deep.equal({
      cpu: "2",
      memory: "2Gi",
    });
    expect((await call(server, "GET", "/apis/metrics.orch.io/v1beta1/nodes/n9")).status).to.equal(404);
  });

  it("refuses writes with 405", async () => {
    const r = await call(server, "POST", "/apis/metrics.orch.io/v1beta1/namespaces/default/pods", {
      apiVersion: "metrics.orch.io/v1beta1",
      kind: "PodMetrics",
      metadata: { name: "x" },
    });
    expect(r.status).to.equal(405);
    expect(r.body.reason).to.equal("MethodNotAllowed");
  });

  it("goes away from discovery and answers 503 while unavailable", async () => {
    server.setMetricsAvailable(false);
    try {
      const groups = (await call(server, "GET", "/apis")).body.groups.map((g: any) => g.name);
      expect(groups).to.not.include("metrics.orch.io");
      expect(groups).to.not.include("metrics.k8s.io");
      const r = await call(server, "GET", "/apis/metrics.orch.io/v1beta1/pods");
      expect(r.status).to.equal(503);
      expect(r.body.reason).to.equal("ServiceUnavailable");
    } finally {
      server.setMetricsAvailable(true);
    }
    expect((await call(server, "GET", "/apis")).body.groups.map((g: any) => g.name)).to.include("metrics.orch.io");
  });
});
