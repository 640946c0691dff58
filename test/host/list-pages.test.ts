// The fleet-wide LISTs a run makes once (every record, every Gateway and VirtualService for the public-host claims) are
// read a page at a time, each page reduced before the next is asked for: a fleet's objects are never all parsed at
// once.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { objectKey } from "../../src/kube/object.js";
import { inventoryText, INVENTORY_KEY, recordBase } from "../../src/records/record.js";
import { RecordStore } from "../../src/records/store.js";
import { KubeClient, MAPPED_PAGE } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const API = "networking.mesh.io/v1beta1";
const CLUSTERS = 2 * MAPPED_PAGE + 7;
const name = (i: number) => `c${String(i).padStart(4, "0")}`;
const gateway = (cluster: string): KubeObject => ({
  apiVersion: API,
  kind: "Gateway",
  metadata: {
    name: "gw",
    namespace: `vc-${cluster}`,
    labels: { "vc.orch.io/inventory": cluster },
    creationTimestamp: "2026-01-01T00:00:00Z",
  },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: [
      { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: [`vc-${cluster}/${cluster}.example.com`] },
    ],
  },
});

describe("sinks/kube: the fleet-wide LISTs are read a page at a time", () => {
  let server: KubeServer;
  let client: KubeClient;
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    for (let i = 0; i < CLUSTERS; i++) {
      const c = name(i);
      const gw = gateway(c);
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: `vc-${c}` } });
      server.put(gw);
      // Every cluster's record holds its Gateway, but the last one's: a Gateway no record holds claims nothing.
      const record = recordBase("vc-system", "src", c, `vc-${c}`);
      if (i < CLUSTERS - 1)
        record.data = { ...(record.data as Record<string, string>), [INVENTORY_KEY]: inventoryText([objectKey(gw)]) };
      server.put(record);
    }
  });
  after(async () => {
    client.close();
    await server.close();
  });
  beforeEach(() => server.resetRequests());
  const pages = (resource: string) =>
    server.requests
      .filter((r) => r.method === "GET" && r.resource === resource && !r.name)
      .map((r) => new URLSearchParams(r.query));

  it("reads every record, MAPPED_PAGE at a time", async () => {
    const records = await new RecordStore(client, "vc-system").list();
    expect(records.map((r) => r.cluster)).to.deep.equal(Array.from({ length: CLUSTERS }, (_, i) => name(i)));
    const asked = pages("configmaps");
    expect(asked).to.have.length(3);
    expect(asked.map((q) => q.get("limit"))).to.deep.equal([
      String(MAPPED_PAGE),
      String(MAPPED_PAGE),
      String(MAPPED_PAGE),
    ]);
    expect(asked.map((q) => q.has("continue"))).to.deep.equal([false, true, true]);
  });

  it("reads the list again from its first page when a continue token expired between two pages, once", async () => {
    const records = "/api/v1/namespaces/vc-system/configmaps";
    const expired = server.faults.add({ method: "GET", path: records, nth: 2, status: 410 });
    try {
      expect(await new RecordStore(client, "vc-system").list()).to.have.length(CLUSTERS);
      expect(expired.fired).to.equal(1);
      expect(
        pages("configmaps").map((q) => q.has("continue")),
        "the page that expired, then the whole list again",
      ).to.deep.equal([false, true, false, true, true]);
    } finally {
      expired.remove();
    }
    server.resetRequests();
    const twice = [
      server.faults.add({ method: "GET", path: records, nth: 2, status: 410 }),
      server.faults.add({ method: "GET", path: records, nth: 4, status: 410 }),
    ];
    try {
      const err = await new RecordStore(client, "vc-system").list().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message, "a second expiry is the server's answer, not a loop").to.match(/410|Gone|expired/i);
    } finally {
      for (const f of twice) f.remove();
    }
  });

  it("indexes the public-host claims of every page, only those a record holds", async () => {
    const target = new KubeTarget(client, new RecordStore(client, "vc-system"));
    const index = await target.hostClaimIndex();
    expect(index.objects()).to.have.length(CLUSTERS - 1);
    expect(index.overlapping(`${name(0)}.example.com`).map((c) => c.cluster)).to.deep.equal([name(0)]);
    expect(index.overlapping(`${name(CLUSTERS - 2)}.example.com`).map((c) => c.cluster)).to.deep.equal([
      name(CLUSTERS - 2),
    ]);
    expect(index.overlapping(`${name(CLUSTERS - 1)}.example.com`), "the Gateway no record holds").to.deep.equal([]);
    const asked = pages("gateways");
    expect(asked.length, "more Gateways than a page: more than one page").to.be.greaterThan(1);
    expect(
      asked.every((q) => Number(q.get("limit")) > 0 && !q.has("resourceVersion")),
      "paged from the store, not one page from the watch cache",
    ).to.equal(true);
  });
});
