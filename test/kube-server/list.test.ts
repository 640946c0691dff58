// LIST over HTTP: label and field selectors, limit/continue paging, Table and metadata-only answers, cluster-wide
// lists.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

const TABLE =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

describe("kube-server: list", () => {
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", "other"] });
    for (let i = 0; i < 25; i++)
      server.put(configMap(`cm-${String(i).padStart(2, "0")}`, {}, { idx: String(i), parity: i % 2 ? "odd" : "even" }));
    server.put(configMap("elsewhere", {}, { parity: "odd" }, "other"));
  });
  after(async () => server.close());

  const names = (body: any) => body.items.map((o: any) => o.metadata.name);

  it("lists one namespace or all, sorted, with the list kind and resourceVersion", async () => {
    const r = await call(server, "GET", "/api/v1/namespaces/default/configmaps");
    expect(r.body.kind).to.equal("ConfigMapList");
    expect(r.body.apiVersion).to.equal("v1");
    expect(r.body.metadata.resourceVersion).to.equal(server.resourceVersion);
    expect(r.body.items).to.have.length(25);
    expect(names(r.body)[0]).to.equal("cm-00");
    const all = await call(server, "GET", "/api/v1/configmaps?labelSelector=parity%3Dodd");
    expect(all.body.items).to.have.length(13);
    expect(all.body.items[0].metadata.namespace).to.equal("default");
    expect(names(all.body)).to.include("elsewhere");
  });

  it(
    "answers metadata only when asked for PartialObjectMetadata " + "(as a metadata informer asks), list and get",
    async () => {
      const accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
      const r = await call(server, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=idx%3D3", undefined, {
        accept,
      });
      expect(r.body.kind).to.equal("PartialObjectMetadataList");
      expect(r.body.metadata.resourceVersion).to.equal(server.resourceVersion);
      expect(r.body.items).to.deep.equal([
        {
          kind: "PartialObjectMetadata",
          apiVersion: "meta.k8s.io/v1",
          metadata: (await call(server, "GET", "/api/v1/namespaces/default/configmaps/cm-03")).body.metadata,
        },
      ]);
      const one = await call(server, "GET", "/api/v1/namespaces/default/configmaps/cm-03", undefined, {
        accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
      });
      expect(Object.keys(one.body).sort()).to.deep.equal(["apiVersion", "kind", "metadata"]);
    },
  );

  it("applies set-based and numeric label selectors and metadata field selectors", async () => {
    const q = (sel: string) =>
      call(server, "GET", `/api/v1/namespaces/default/configmaps?labelSelector=${encodeURIComponent(sel)}`);
    expect(names((await q("idx in (1,2,3),parity!=odd")).body)).to.deep.equal(["cm-02"]);
    expect(names((await q("idx>22")).body)).to.deep.equal(["cm-23", "cm-24"]);
    expect((await q("parity notin (odd),!missing")).body.items).to.have.length(13);
    const byName = await call(server, "GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm-07");
    expect(names(byName.body)).to.deep.equal(["cm-07"]);
    const notDefault = await call(server, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace!%3Ddefault");
    expect(names(notDefault.body)).to.deep.equal(["elsewhere"]);
  });

  it("supports upstream's per-kind field selectors (pods by node and phase, events by involved object)", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p1", namespace: "default" },
      spec: { nodeName: "n1", containers: [] },
      status: { phase: "Running" },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p2", namespace: "default" },
      spec: { nodeName: "n2", containers: [] },
      status: { phase: "Succeeded" },
    });
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "e1", namespace: "default" },
      involvedObject: { kind: "Pod", name: "p1", namespace: "default" },
      reason: "Started",
      type: "Normal",
    });
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "e2", namespace: "default" },
      involvedObject: { kind: "Pod", name: "p2", namespace: "default" },
      reason: "Failed",
      type: "Warning",
    });
    const pods = await call(
      server,
      "GET",
      `/api/v1/pods?fieldSelector=${encodeURIComponent("spec.nodeName=n1,status.phase!=Succeeded")}`,
    );
    expect(names(pods.body)).to.deep.equal(["p1"]);
    const events = await call(
      server,
      "GET",
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent("involvedObject.name=p2,type=Warning")}`,
    );
    expect(names(events.body)).to.deep.equal(["e2"]);
    expect((await call(server, "GET", "/api/v1/configmaps?fieldSelector=spec.nodeName%3Dn1")).status).to.equal(400);
  });

  it("answers 400 for a bad selector or an unsupported field", async () => {
    const bad = await call(server, "GET", "/api/v1/configmaps?labelSelector=a%20in%20b");
    expect(bad.status).to.equal(400);
    expect(bad.body.reason).to.equal("BadRequest");
    const field = await call(server, "GET", "/api/v1/configmaps?fieldSelector=spec.x%3Dy");
    expect(field.status).to.equal(400);
    expect(field.body.message).to.include("field label not supported: spec.x");
  });

  it("pages with limit and continue, with remainingItemCount, and the pages add up", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await call(
        server,
        "GET",
        `/api/v1/namespaces/default/configmaps?limit=10${token ? `&continue=${encodeURIComponent(token)}` : ""}`,
      );
      expect(r.status).to.equal(200);
      seen.push(...names(r.body));
      token = r.body.metadata.continue;
      if (pages === 0) expect(r.body.metadata.remainingItemCount).to.equal(15);
      pages++;
    } while (token);
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal(Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(2, "0")}`));
    expect((await call(server, "GET", "/api/v1/configmaps?limit=5&continue=%%%")).status).to.equal(400);
  });

  it("answers a Table when kubectl asks for one, with partial object metadata in the rows", async () => {
    const r = await call(server, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=idx%3D3", undefined, {
      accept: TABLE,
    });
    expect(r.body.kind).to.equal("Table");
    expect(r.body.apiVersion).to.equal("meta.k8s.io/v1");
    expect(r.body.columnDefinitions.map((c: any) => c.name)).to.deep.equal(["Name", "Data", "Age"]);
    expect(r.body.rows).to.have.length(1);
    expect(r.body.rows[0].cells.slice(0, 2)).to.deep.equal(["cm-03", 0]);
    expect(r.body.rows[0].object).to.deep.include({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1" });
    expect(r.body.rows[0].object.metadata.labels).to.deep.equal({ idx: "3", parity: "odd" });
  });

  it("gives pods upstream's columns, the wide ones at priority 1, and events a LAST SEEN table", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "tp", namespace: "default", labels: { t: "1" } },
      spec: { nodeName: "n7", containers: [{ name: "a" }, { name: "b" }] },
      status: {
        phase: "Running",
        podIP: "10.0.0.9",
        containerStatuses: [
          { ready: true, restartCount: 2 },
          { ready: false, restartCount: 1 },
        ],
      },
    });
    const pods = (
      await call(server, "GET", "/api/v1/namespaces/default/pods?labelSelector=t%3D1", undefined, { accept: TABLE })
    ).body;
    expect(pods.columnDefinitions.map((c: any) => `${c.name}:${c.priority}`)).to.deep.equal([
      "Name:0",
      "Ready:0",
      "Status:0",
      "Restarts:0",
      "Age:0",
      "IP:1",
      "Node:1",
    ]);
    expect(pods.rows[0].cells.filter((_: unknown, i: number) => i !== 4)).to.deep.equal([
      "tp",
      "1/2",
      "Running",
      3,
      "10.0.0.9",
      "n7",
    ]);
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "tp.1", namespace: "default" },
      involvedObject: { kind: "Pod", name: "tp", namespace: "default" },
      reason: "Killing",
      message: "stopping",
      type: "Normal",
    });
    const events = (
      await call(server, "GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dtp", undefined, {
        accept: TABLE,
      })
    ).body;
    expect(events.columnDefinitions.map((c: any) => c.name)).to.deep.equal([
      "Last Seen",
      "Type",
      "Reason",
      "Object",
      "Message",
    ]);
    expect(events.rows[0].cells.slice(1)).to.deep.equal(["Normal", "Killing", "pod/tp", "stopping"]);
  });

  it("answers 404 for unknown resources and groups", async () => {
    expect((await call(server, "GET", "/api/v1/widgets")).status).to.equal(404);
    expect((await call(server, "GET", "/apis/nope.io/v1/things")).status).to.equal(404);
  });
});
