import { expect } from "chai";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import {
  addNode,
  addPod,
  eventually,
  get,
  HOST_NS,
  hostNameOf,
  names,
  proxyFor,
  startHost,
  type KubeServer,
} from "./fixture.js";

const G = "/apis/metrics.orch.io/v1beta1";
const LONG = "a-pod-name-long-enough-that-the-naming-contract-hashes-its-host-name";

describe("metrics-proxy against the host test server", () => {
  let server: KubeServer;
  let a: RunningProxy;

  before(async () => {
    server = await startHost();
    await addNode(server, "node-1", "100m", { zone: "z1" });
    await addNode(server, "node-2", "200m", { zone: "z2" });
    await addNode(server, "node-3", "300m", { zone: "z3" });
    // Cluster a and b share virtual names (default/web, default/db); b runs on node-3 only.
    await addPod(server, {
      cluster: "a",
      namespace: "default",
      name: "web",
      labels: { app: "web", tier: "front" },
      node: "node-1",
      cpu: "11m",
    });
    await addPod(server, {
      cluster: "a",
      namespace: "default",
      name: "db",
      labels: { app: "db", tier: "back" },
      node: "node-2",
      cpu: "12m",
    });
    await addPod(server, {
      cluster: "a",
      namespace: "team",
      name: "web",
      labels: { app: "web", release: "canary" },
      node: "node-1",
      cpu: "13m",
    });
    await addPod(server, {
      cluster: "a",
      namespace: "team",
      name: LONG,
      labels: { app: "long" },
      node: "node-1",
      cpu: "14m",
    });
    await addPod(server, {
      cluster: "b",
      namespace: "default",
      name: "web",
      labels: { app: "web", tier: "front" },
      node: "node-3",
      cpu: "21m",
    });
    await addPod(server, {
      cluster: "b",
      namespace: "default",
      name: "db",
      labels: { app: "db" },
      node: "node-3",
      cpu: "22m",
    });
    await addPod(server, { cluster: "b", namespace: "only-b", name: "x", node: "node-3", cpu: "23m" });
    // Unsynced host pods: no ownership label; and one claiming cluster a without the virtual name annotations.
    await addPod(server, {
      namespace: "default",
      name: "host-daemon",
      hostName: "host-daemon",
      node: "node-3",
      cpu: "31m",
    });
    await addPod(server, {
      namespace: "default",
      name: "sneaky",
      cluster: "a",
      noAnnotations: true,
      node: "node-3",
      cpu: "32m",
    });
    a = await proxyFor(server, "a");
  });

  after(async () => {
    await a?.close();
    await server?.close();
  });

  describe("pod metrics", () => {
    it("lists exactly the cluster's pods with virtual names, sorted by namespace then name", async () => {
      const res = await get(a, `${G}/pods`);
      expect(res.status).to.equal(200);
      expect(res.body.kind).to.equal("PodMetricsList");
      expect(res.body.apiVersion).to.equal("metrics.orch.io/v1beta1");
      expect(names(res.body)).to.deep.equal(["default/db", "default/web", `team/${LONG}`, "team/web"]);
      expect(res.body.items.map((i: any) => i.containers[0].usage.cpu)).to.deep.equal(["12m", "11m", "14m", "13m"]);
    });

    it("translates labels back to virtual and leaks no host-only key or host name", async () => {
      const res = await get(a, `${G}/namespaces/default/pods/web`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ kind: "PodMetrics", apiVersion: "metrics.orch.io/v1beta1" });
      expect(res.body.metadata).to.include({ name: "web", namespace: "default" });
      expect(res.body.metadata.labels).to.deep.equal({ app: "web", tier: "front" });
      expect(res.body.containers).to.deep.equal([{ name: "main", usage: { cpu: "11m", memory: "1Mi" } }]);
      expect(res.body).to.have.keys("kind", "apiVersion", "metadata", "timestamp", "window", "containers");
      const list = await get(a, `${G}/pods`);
      for (const text of [res.text, list.text]) {
        expect(text).not.to.contain("vc.orch.io");
        expect(text).not.to.contain(HOST_NS);
        expect(text).not.to.contain("-x-");
      }
    });

    it("lists one namespace and resolves hashed long names through the index", async () => {
      expect(names((await get(a, `${G}/namespaces/team/pods`)).body)).to.deep.equal([`team/${LONG}`, "team/web"]);
      const long = await get(a, `${G}/namespaces/team/pods/${LONG}`);
      expect(long.status).to.equal(200);
      expect(long.body.containers[0].usage.cpu).to.equal("14m");
      expect(hostNameOf({ cluster: "a", namespace: "team", name: LONG })).to.have.length(63);
    });

    it("answers 404 for other tenants' pods, unsynced pods and host names, exactly like unknown pods", async () => {
      const unknown = await get(a, `${G}/namespaces/default/pods/nope`);
      expect(unknown.status).to.equal(404);
      for (const path of [
        `${G}/namespaces/only-b/pods/x`,
        `${G}/namespaces/default/pods/host-daemon`,
        `${G}/namespaces/default/pods/sneaky`,
        `${G}/namespaces/${HOST_NS}/pods/web-x-default-x-a`,
        `${G}/namespaces/${HOST_NS}/pods/host-daemon`,
      ]) {
        const res = await get(a, path);
        expect(res.status, path).to.equal(404);
        expect(res.body).to.include({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 });
        expect(res.body.message).to.match(/^podmetrics\.metrics\.orch\.io ".+" not found$/);
      }
      expect(names((await get(a, `${G}/namespaces/only-b/pods`)).body)).to.deep.equal([]);
    });

    it("serves another cluster its own pods behind the same virtual names", async () => {
      const b = await proxyFor(server, "b");
      try {
        const web = await get(b, `${G}/namespaces/default/pods/web`);
        expect(web.body.containers[0].usage.cpu).to.equal("21m");
        expect(names((await get(b, `${G}/pods`)).body)).to.deep.equal(["default/db", "default/web", "only-b/x"]);
        expect((await get(b, `${G}/namespaces/team/pods/web`)).status).to.equal(404);
      } finally {
        await b.close();
      }
    });
  });

  describe("selectors", () => {
    const cases: Array<[string, string[]]> = [
      ["labelSelector=app%3Dweb", ["default/web", "team/web"]],
      ["labelSelector=app%3D%3Dweb", ["default/web", "team/web"]],
      ["labelSelector=app!%3Dweb", ["default/db", `team/${LONG}`]],
      ["labelSelector=app%20in%20(db,long)", ["default/db", `team/${LONG}`]],
      ["labelSelector=app%20notin%20(web,long)", ["default/db"]],
      ["labelSelector=tier", ["default/db", "default/web"]],
      ["labelSelector=!tier", [`team/${LONG}`, "team/web"]],
      ["labelSelector=app%3Dweb,!release", ["default/web"]],
      ["labelSelector=tier%20in%20(front),app", ["default/web"]],
      ["fieldSelector=metadata.name%3Dweb", ["default/web", "team/web"]],
      ["fieldSelector=metadata.namespace%3Dteam", [`team/${LONG}`, "team/web"]],
      ["fieldSelector=metadata.namespace!%3Dteam,metadata.name!%3Ddb", ["default/web"]],
      ["fieldSelector=metadata.name%3Dweb&labelSelector=release%3Dcanary", ["team/web"]],
      // Host-only keys are not virtual labels: selecting on them finds nothing.
      ["labelSelector=vc.orch.io%2Fmanaged-by%3Da", []],
      ["labelSelector=vc.orch.io%2Fnamespace", []],
    ];
    for (const [query, expected] of cases) {
      it(`${decodeURIComponent(query)} selects ${expected.length} pods`, async () => {
        const res = await get(a, `${G}/pods?${query}`);
        expect(res.status).to.equal(200);
        expect(names(res.body)).to.deep.equal(expected);
      });
    }

    it("applies selectors on namespace lists too", async () => {
      expect(names((await get(a, `${G}/namespaces/team/pods?labelSelector=app%20in%20(web)`)).body)).to.deep.equal([
        "team/web",
      ]);
    });

    it("answers malformed selectors with a 400 Status, never a 500", async () => {
      for (const q of [
        "labelSelector=app%20in%20web",
        "labelSelector=a%3Db%3Dc",
        "labelSelector=%2C",
        "fieldSelector=spec.nodeName%3Dn",
        "fieldSelector=metadata.name",
      ]) {
        const res = await get(a, `${G}/pods?${q}`);
        expect(res.status, q).to.equal(400);
        expect(res.body).to.include({ kind: "Status", reason: "BadRequest", code: 400 });
      }
    });
  });

  describe("node metrics", () => {
    it("lists only the nodes the cluster's pods run on, with host-only labels removed", async () => {
      const res = await get(a, `${G}/nodes`);
      expect(res.body.kind).to.equal("NodeMetricsList");
      expect(names(res.body)).to.deep.equal(["node-1", "node-2"]);
      expect(res.body.items[0].usage.cpu).to.equal("100m");
      expect(res.body.items[0].metadata.labels).to.include({ zone: "z1" });
      expect((await get(a, `${G}/nodes/node-2`)).body.usage.cpu).to.equal("200m");
      const other = await get(a, `${G}/nodes/node-3`);
      expect(other.status).to.equal(404);
      expect(other.body.message).to.equal('nodemetrics.metrics.orch.io "node-3" not found');
      expect((await get(a, `${G}/nodes/nope`)).status).to.equal(404);
    });

    it("selects nodes by label and name", async () => {
      expect(names((await get(a, `${G}/nodes?labelSelector=zone%20notin%20(z1)`)).body)).to.deep.equal(["node-2"]);
      expect(names((await get(a, `${G}/nodes?fieldSelector=metadata.name%3Dnode-1`)).body)).to.deep.equal(["node-1"]);
    });

    it("lists every host node with --nodes all", async () => {
      const all = await proxyFor(server, "a", ["--nodes", "all"]);
      try {
        expect(names((await get(all, `${G}/nodes`)).body)).to.deep.equal(["node-1", "node-2", "node-3"]);
        expect((await get(all, `${G}/nodes/node-3`)).status).to.equal(200);
      } finally {
        await all.close();
      }
    });

    it("serves the synced core Nodes (capacity for kubectl top node) and the cluster's core Pods", async () => {
      const nodes = await get(a, "/api/v1/nodes");
      expect(nodes.body.kind).to.equal("NodeList");
      expect(names(nodes.body)).to.deep.equal(["node-1", "node-2"]);
      expect(nodes.body.items[0].status.allocatable.cpu).to.equal("4");
      expect((await get(a, "/api/v1/nodes/node-3")).status).to.equal(404);
      const pods = await get(a, "/api/v1/namespaces/default/pods");
      expect(names(pods.body)).to.deep.equal(["default/db", "default/web"]);
      expect(pods.body.items[1].metadata.labels).to.deep.equal({ app: "web", tier: "front" });
      expect((await get(a, "/api/v1/namespaces/only-b/pods/x")).status).to.equal(404);
    });
  });

  describe("the pod index follows the host watch", () => {
    it("adds, moves and removes pods and nodes as the host changes", async () => {
      await addPod(server, {
        cluster: "a",
        namespace: "late",
        name: "p",
        labels: { app: "late" },
        node: "node-3",
        cpu: "41m",
      });
      a.cache.clear();
      await eventually(async () => (await get(a, `${G}/namespaces/late/pods/p`)).status === 200);
      expect(names((await get(a, `${G}/nodes`)).body)).to.deep.equal(["node-1", "node-2", "node-3"]);
      // Relabelled to another cluster: gone from a, as if deleted.
      const moved = server.get("v1", "Pod", HOST_NS, hostNameOf({ cluster: "a", namespace: "late", name: "p" }))!;
      moved.metadata.labels!["vc.orch.io/managed-by"] = "b";
      server.put(moved);
      await eventually(async () => (await get(a, `${G}/namespaces/late/pods/p`)).status === 404);
      moved.metadata.labels!["vc.orch.io/managed-by"] = "a";
      server.put(moved);
      await eventually(async () => (await get(a, `${G}/namespaces/late/pods/p`)).status === 200);
      expect(server.remove("v1", "Pod", HOST_NS, hostNameOf({ cluster: "a", namespace: "late", name: "p" }))).to.equal(
        true,
      );
      await eventually(async () => (await get(a, `${G}/namespaces/late/pods/p`)).status === 404);
      // Which nodes a cluster's pods run on is read with its node metrics, as fresh as the cache.
      a.cache.clear();
      expect(names((await get(a, `${G}/nodes`)).body)).to.deep.equal(["node-1", "node-2"]);
    });
  });
});
