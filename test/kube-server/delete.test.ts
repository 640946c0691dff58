// DELETE over HTTP: propagation through ownerReferences (Background, Orphan), namespace deletion, preconditions,
// collections.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

describe("kube-server: delete", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer({ namespaces: ["default", "team"] });
  });
  afterEach(async () => server.close());

  function owned(owner: { metadata: { name: string; uid?: string } }, name: string) {
    return {
      ...configMap(name),
      metadata: {
        name,
        namespace: "default",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "StatefulSet", name: owner.metadata.name, uid: owner.metadata.uid! },
        ],
      },
    };
  }

  const sts = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "db" } },
      template: { metadata: { labels: { app: "db" } }, spec: { containers: [{ name: "db", image: "pg" }] } },
    },
  };

  it("deletes dependents with Background propagation (the default), recursively", async () => {
    const owner = server.put(sts);
    const child = server.put(owned(owner, "child"));
    server.put({
      ...configMap("grandchild"),
      metadata: {
        name: "grandchild",
        namespace: "default",
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "child", uid: child.metadata.uid! }],
      },
    });
    server.put(configMap("unrelated"));
    const r = await call(server, "DELETE", "/apis/apps/v1/namespaces/default/statefulsets/db", {
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Background",
    });
    expect(r.status).to.equal(200);
    expect(server.list("v1", "ConfigMap", "default").map((o) => o.metadata.name)).to.deep.equal(["unrelated"]);
  });

  it("orphans dependents with Orphan, dropping the owner reference", async () => {
    const owner = server.put(sts);
    server.put(owned(owner, "child"));
    await call(server, "DELETE", "/apis/apps/v1/namespaces/default/statefulsets/db?propagationPolicy=Orphan");
    const child = server.get("v1", "ConfigMap", "default", "child")!;
    expect(child).to.not.equal(undefined);
    expect(child.metadata.ownerReferences).to.equal(undefined);
  });

  it("removes everything in a namespace with the namespace", async () => {
    server.put(configMap("a", {}, undefined, "team"));
    server.put({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "team" }, data: {} });
    server.put(configMap("kept"));
    const r = await call(server, "DELETE", "/api/v1/namespaces/team");
    expect(r.status).to.equal(200);
    expect(r.body.kind).to.equal("Namespace");
    expect(server.list("v1", "ConfigMap").map((o) => o.metadata.name)).to.deep.equal(["kept"]);
    expect(server.list("v1", "Secret")).to.deep.equal([]);
    expect(server.get("v1", "Namespace", undefined, "team")).to.equal(undefined);
  });

  it("checks preconditions and rejects an unknown propagation policy", async () => {
    const cm = server.put(configMap("a"));
    const wrongUid = await call(server, "DELETE", "/api/v1/namespaces/default/configmaps/a", {
      preconditions: { uid: "not-it" },
    });
    expect(wrongUid.status).to.equal(409);
    const badPolicy = await call(
      server,
      "DELETE",
      "/api/v1/namespaces/default/configmaps/a?propagationPolicy=Sometimes",
    );
    expect(badPolicy.status).to.equal(422);
    const ok = await call(server, "DELETE", "/api/v1/namespaces/default/configmaps/a", {
      preconditions: { uid: cm.metadata.uid, resourceVersion: cm.metadata.resourceVersion },
    });
    expect(ok.status).to.equal(200);
    expect((await call(server, "DELETE", "/api/v1/namespaces/default/configmaps/a")).status).to.equal(404);
  });

  it("deletes a label-selected collection", async () => {
    server.put(configMap("a", {}, { drop: "yes" }));
    server.put(configMap("b", {}, { drop: "yes" }));
    server.put(configMap("c", {}, { drop: "no" }));
    const r = await call(server, "DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=drop%3Dyes");
    expect(r.status).to.equal(200);
    expect(r.body.items.map((o: any) => o.metadata.name)).to.deep.equal(["a", "b"]);
    expect(server.list("v1", "ConfigMap", "default").map((o) => o.metadata.name)).to.deep.equal(["c"]);
  });
});
