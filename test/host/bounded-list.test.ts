// host/bounded-list: a LIST of what someone else may write stops at its bound in objects and in bytes, and says why.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { KubeClient } from "../../src/host/client.js";
import { listBounded } from "../../src/host/bounded-list.js";
import type { KubeObject } from "../../src/kube/object.js";

describe("host/bounded-list", function () {
  this.timeout(30_000);
  let server: KubeServer;
  let client: KubeClient;
  const path = "/api/v1/namespaces/t/configmaps";
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({ kubeconfig: server.kubeconfigPath });
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "t" } });
    for (let i = 0; i < 30; i++)
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${String(i).padStart(2, "0")}`, namespace: "t", labels: { big: String(i >= 20) } },
        data: { pad: "x".repeat(i >= 20 ? 200_000 : 10) },
      });
  });
  after(async () => {
    client.close();
    await server.close();
  });
  const names = (items: KubeObject[]) => items.map((o) => o.metadata.name);

  it("reads a whole list within its bounds, a page at a time", async () => {
    const got = await listBounded<KubeObject, KubeObject>(
      client,
      path,
      { labelSelector: "big=false" },
      { maxObjects: 100, maxBytes: 1 << 20, pageSize: 7 },
      (o) => o,
    );
    expect(got.stopped).to.equal(undefined);
    expect(names(got.items)).to.have.length(20);
  });

  it("stops past maxObjects, keeping what it read", async () => {
    const got = await listBounded(client, path, {}, { maxObjects: 12, maxBytes: 1 << 24, pageSize: 5 }, (o) => o);
    expect(got.stopped).to.equal("more than 12 objects");
    expect(got.items).to.have.length(12);
  });

  it("halves a page longer than the bytes left, and stops at maxBytes", async () => {
    const got = await listBounded<KubeObject, string>(
      client,
      path,
      { labelSelector: "big=true" },
      { maxObjects: 100, maxBytes: 900_000, pageSize: 10 },
      (o) => o.metadata.name,
    );
    expect(got.stopped).to.equal("more than 900000 bytes");
    expect(got.items.length).to.be.within(3, 4);
  });

  it("reads metadata alone when asked: no data, the labels kept", async () => {
    const got = await listBounded<KubeObject, KubeObject>(
      client,
      path,
      { labelSelector: "big=true" },
      { maxObjects: 100, maxBytes: 1 << 20, metadataOnly: true },
      (o) => o,
    );
    expect(got.stopped).to.equal(undefined);
    expect(got.items).to.have.length(10);
    expect(got.items[0]).to.not.have.property("data");
    expect(got.items[0]!.metadata.labels).to.deep.equal({ big: "true" });
  });

  it("a kind the server does not serve is an empty list", async () => {
    const got = await listBounded(
      client,
      "/apis/example.com/v1/things",
      {},
      { maxObjects: 5, maxBytes: 1000 },
      (o) => o,
    );
    expect(got.items).to.deep.equal([]);
  });
});
