// The records namespace is a platform namespace (issue #38 case 4): made with the platform mark on the first write that
// finds it missing (once for writes at once, again once deleted), never one that exists without the mark or where a
// cluster lives; no record is read or written there.
import { expect } from "chai";
import { RecordStore } from "../../src/records/store.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

describe("records/store: the records namespace", () => {
  let server: KubeServer;
  let store: RecordStore;
  const namespaceWrites = () =>
    server.requests.filter((r) => r.resource === "namespaces" && r.method !== "GET").map((r) => r.method);

  beforeEach(async () => {
    server = await startKubeServer();
    store = new RecordStore(
      KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      }),
      "vc-records",
    );
  });
  afterEach(async () => {
    store.client.close();
    await server.close();
  });

  it("is made, marked, once for writes that find it missing at once, and made again once deleted", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.writeInventory("mine", `c${i}`, `vc-c${i}`, [`Namespace//vc-c${i}`])),
    );
    expect(namespaceWrites()).to.deep.equal(["POST"]);
    expect(server.get("v1", "Namespace", "", "vc-records")!.metadata.labels).to.deep.include({
      "vc.orch.io/platform-namespace": "true",
    });
    expect((await store.list()).map((r) => r.cluster)).to.deep.equal(["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"]);

    server.remove({ apiVersion: "v1", kind: "Namespace", name: "vc-records" });
    server.resetRequests();
    await store.writeInventory("mine", "c8", "vc-c8", ["Namespace//vc-c8"]);
    expect(namespaceWrites()).to.deep.equal(["POST"]);
    expect((await store.read("mine", "c8"))?.inventory).to.deep.equal(["Namespace//vc-c8"]);
  });

  it("#38.4: a namespace without the mark is no records namespace: nothing read, nothing written", async () => {
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-records" } });
    // A record planted there (a tenant with rights in the namespace) is never read.
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "planted", namespace: "vc-records", labels: { "vc.orch.io/record": "record" } },
      data: { source: "mine", cluster: "c0", hostNamespace: "vc-c0" },
    });
    for (const attempt of [
      () => store.list(),
      () => store.read("mine", "c0"),
      () => store.writeInventory("mine", "c0", "vc-c0", []),
    ])
      await attempt().then(
        () => expect.fail("used a namespace without the platform mark"),
        (err: Error) =>
          expect(err.message).to.match(/without the platform mark \(label vc\.orch\.io\/platform-namespace=true\)/),
      );
    expect(namespaceWrites()).to.deep.equal([]);
    expect(server.requests.filter((r) => r.resource === "configmaps")).to.deep.equal([]);
  });

  it("#38.4: a marked namespace where a cluster lives (its inventory label) is none either", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: "vc-records",
        labels: { "vc.orch.io/platform-namespace": "true", "vc.orch.io/inventory": "tenant" },
      },
    });
    await store.writeInventory("mine", "c0", "vc-c0", []).then(
      () => expect.fail("kept records where a cluster lives"),
      (err: Error) => expect(err.message).to.match(/host namespace of cluster tenant/),
    );
    expect(server.requests.filter((r) => r.resource === "configmaps")).to.deep.equal([]);
  });
});
