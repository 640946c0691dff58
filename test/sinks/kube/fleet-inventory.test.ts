// FleetInventoryReader: a fleet's live objects read with one paged LIST per kind, handed out a chunk of clusters at a
// time. Taken in the order of their host namespaces, each chunk reads each kind just past its last object; what no
// record holds is never handed out; chunks taken out of that order fall back to a LIST per kind and chunk once too
// many objects wait, and the reads stop there.
import { expect } from "chai";
import type { KubeObject } from "../../../src/kube/object.js";
import { objectKey } from "../../../src/kube/object.js";
import { resourceFor } from "../../../src/kube/resources.js";
import { inventoryText, INVENTORY_KEY, recordBase } from "../../../src/records/record.js";
import { RecordStore } from "../../../src/records/store.js";
import { KubeClient } from "../../../src/host/client.js";
import { FleetInventoryReader, inNamespaceOrder } from "../../../src/sinks/kube/fleet-inventory.js";
import { KubeTarget } from "../../../src/sinks/kube/target.js";
import { chunksOf } from "../../../src/util/pool.js";
import { startKubeServer, type KubeServer } from "../../support/kube-server/index.js";

const CLUSTERS = 30;
// Names and namespaces in opposite orders: the namespace order is not the name order.
const name = (i: number) => `c${String(i).padStart(2, "0")}`;
const namespaceOf = (i: number) => `ns-${String(CLUSTERS - i).padStart(2, "0")}`;
const TYPES = [resourceFor("v1", "ServiceAccount")!, resourceFor("v1", "Service")!];
const labelled = (kind: string, objectName: string, i: number): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { name: objectName, namespace: namespaceOf(i), labels: { "vc.orch.io/inventory": name(i) } },
  ...(kind === "Service" ? { spec: { ports: [{ port: 80 }] } } : {}),
});

describe("sinks/kube: the fleet's live objects by one paged LIST per kind (FleetInventoryReader)", () => {
  let server: KubeServer;
  let client: KubeClient;
  let target: KubeTarget;
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    target = new KubeTarget(client, new RecordStore(client, "vc-system"));
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    for (let i = 0; i < CLUSTERS; i++) {
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespaceOf(i) } });
      const held = [labelled("ServiceAccount", "sa", i), labelled("Service", "svc", i)];
      for (const o of held) server.put(o);
      // A labelled object planted beside them, that no record holds.
      server.put(labelled("ServiceAccount", "planted", i));
      // The last cluster has no record: nothing of it is vc's.
      if (i === CLUSTERS - 1) continue;
      const record = recordBase("vc-system", "", name(i), namespaceOf(i));
      record.data = { ...(record.data as Record<string, string>), [INVENTORY_KEY]: inventoryText(held.map(objectKey)) };
      server.put(record);
    }
  });
  after(async () => {
    client.close();
    await server.close();
  });
  beforeEach(() => server.resetRequests());

  const all = Array.from({ length: CLUSTERS }, (_, i) => name(i));
  const pagesAsked = (resource: string) =>
    server.requests
      .filter((r) => r.method === "GET" && r.resource === resource && new URLSearchParams(r.query).has("limit"))
      .map((r) => new URLSearchParams(r.query));
  const reader = async (clusters: readonly string[], limits: { pageSize?: number; aheadMax?: number }) =>
    new FleetInventoryReader(
      client,
      TYPES,
      await target.recordsByCluster(),
      clusters,
      (names) => target.listRecordedInventory(names),
      limits,
    );

  it("hands out each cluster's held objects, reading each kind only as far as the chunk in hand needs", async () => {
    const records = await target.recordsByCluster();
    const order = inNamespaceOrder(all, (c) => records.get(c)?.hostNamespace);
    expect(order.slice(0, 3)).to.deep.equal(["c29", "c28", "c27"]);
    const r = await reader(order, { pageSize: 6 });
    const chunks = chunksOf(order, 3);
    const first = await r.take(chunks[0]!);
    // c29 has no record; c28 and c27 their ServiceAccount and Service, not the planted ServiceAccount.
    expect([...first].map(([c, objs]) => [c, objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()])).to.deep.equal([
      ["c29", []],
      ["c28", ["Service/svc", "ServiceAccount/sa"]],
      ["c27", ["Service/svc", "ServiceAccount/sa"]],
    ]);
    // Two ServiceAccounts a namespace: c27's is on the first page of 6; the Services' first page too.
    expect(pagesAsked("serviceaccounts")).to.have.length(1);
    expect(pagesAsked("services")).to.have.length(1);
    const seen = new Map(first);
    for (const chunk of chunks.slice(1)) for (const [c, objs] of await r.take(chunk)) seen.set(c, objs);
    expect(r.fellBack).to.equal(undefined);
    expect([...seen.keys()].sort()).to.deep.equal(all);
    for (const [c, objs] of seen)
      expect(objs.map((o) => o.metadata.name).sort(), c).to.deep.equal(c === "c29" ? [] : ["sa", "svc"]);
    // One LIST per kind for the whole fleet, followed to its end page by page: 60 labelled ServiceAccounts in pages of
    // 6.
    const sa = pagesAsked("serviceaccounts");
    expect(sa.filter((q) => !q.has("continue"))).to.have.length(1);
    expect(sa).to.have.length(10);
    expect(sa.every((q) => q.get("limit") === "6" && !q.has("resourceVersion"))).to.equal(true);
  });

  it(
    "hands out what a LIST per kind and chunk does, and falls back to it once too many objects wait for chunks " +
      "taken out of order",
    async () => {
      // In name order, which is the reverse of the namespace order: the first chunk's objects are at the end of each
      // LIST.
      const r = await reader(all, { pageSize: 6, aheadMax: 20 });
      const byName = chunksOf(all, 3);
      const first = await r.take(byName[0]!);
      expect(r.fellBack).to.match(/more than 20 objects were read ahead/);
      // The reads stopped once 20 objects waited (3 a page of ServiceAccounts, 6 of Services, a page of each at most
      // in flight): not all 15 pages of the two LISTs.
      const read = pagesAsked("serviceaccounts").length + pagesAsked("services").length;
      expect(read).to.be.at.least(3).and.at.most(10);
      const expected = await target.listRecordedInventory(byName[0]!);
      expect([...first].map(([c, o]) => [c, o.map(objectKey).sort()])).to.deep.equal(
        [...expected].map(([c, o]) => [c, o.map(objectKey).sort()]),
      );
      server.resetRequests();
      const second = await r.take(byName[1]!);
      expect([...second.values()].every((objs) => objs.length === 2)).to.equal(true);
      expect(pagesAsked("serviceaccounts"), "read by name, from the watch cache").to.have.length(0);
    },
  );

  it(
    "#38.1: a page longer than its bytes (objects someone labelled as a cluster's) makes the reader read a chunk " +
      "at a time, bounded too",
    async () => {
      const records = await target.recordsByCluster();
      const order = inNamespaceOrder(all, (c) => records.get(c)?.hostNamespace);
      const r = new FleetInventoryReader(
        client,
        TYPES,
        records,
        order,
        (names) => target.listRecordedInventory(names),
        {
          pageSize: 50,
          pageBytes: 2_000,
        },
      );
      const first = await r.take(chunksOf(order, 3)[0]!);
      expect(r.fellBack).to.match(/longer than 2000 bytes/);
      expect(
        first
          .get("c28")!
          .map((o) => o.metadata.name)
          .sort(),
      ).to.deep.equal(["sa", "svc"]);
    },
  );
});

describe("sinks/kube: a chunk's LIST past its bytes is read by name (#38.1)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let client: KubeClient;
  let target: KubeTarget;
  const told: string[] = [];
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    target = new KubeTarget(client, new RecordStore(client, "vc-system"));
    target.tell = (m) => told.push(m);
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    for (const [i, ns] of ["ns-a", "ns-b"].entries()) {
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      const cluster = ["a", "b"][i]!;
      const held: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cfg", namespace: ns, labels: { "vc.orch.io/inventory": cluster } },
        data: { k: "v" },
      };
      server.put(held);
      const record = recordBase("vc-system", "", cluster, ns);
      record.data = { ...(record.data as Record<string, string>), [INVENTORY_KEY]: inventoryText([objectKey(held)]) };
      server.put(record);
    }
    // b's tenant plants 10 ConfigMaps of 900 KB labelled as a's inventory, in its own namespace.
    const pad = "x".repeat(900 * 1024);
    for (let i = 0; i < 10; i++)
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `planted-${i}`, namespace: "ns-b", labels: { "vc.orch.io/inventory": "a" } },
        data: { pad },
      });
  });
  after(async () => {
    client.close();
    await server.close();
  });

  for (const [what, read] of [
    ["a chunk", () => target.listRecordedInventory(["a", "b"])],
    ["one cluster", async () => new Map([["a", await target.listInventory("a")]])],
    ["the fleet", () => target.listFleetInventory()],
  ] as const) {
    it(`${what}: the records' objects, one GET each; nothing planted`, async () => {
      server.resetRequests();
      told.length = 0;
      const live = await read();
      expect(live.get("a")!.map(objectKey)).to.deep.equal(["ConfigMap/ns-a/cfg"]);
      expect(told.join("\n")).to.match(/configmaps .* longer than \d+ bytes/);
      expect(server.countRequests({ verb: "get", resource: "configmaps" })).to.be.at.least(1);
    });
  }
});
