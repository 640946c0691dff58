// The records namespace is created on the first write that finds it missing: once for the writes that find it missing
// together (a first run's chunk), and again when it was deleted since.
import { expect } from "chai";
import { RecordStore } from "../../src/records/store.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

describe("records/store: the records namespace", () => {
  let server: KubeServer;
  let store: RecordStore;
  const namespaceRequests = () =>
    server.requests.filter((r) => r.resource === "namespaces" && r.name === "vc-records").map((r) => r.method);

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

  it("is looked up and created once for writes that find it missing at once, and created again once deleted", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.writeInventory("mine", `c${i}`, `vc-c${i}`, [`Namespace//vc-c${i}`])),
    );
    expect(namespaceRequests()).to.deep.equal(["GET", "PATCH"]);
    expect((await store.list()).map((r) => r.cluster)).to.deep.equal(["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"]);

    server.remove({ apiVersion: "v1", kind: "Namespace", name: "vc-records" });
    server.resetRequests();
    await store.writeInventory("mine", "c8", "vc-c8", ["Namespace//vc-c8"]);
    expect(namespaceRequests()).to.deep.equal(["GET", "PATCH"]);
    expect((await store.read("mine", "c8"))?.inventory).to.deep.equal(["Namespace//vc-c8"]);
  });
});
