// PATCH kinds over HTTP: JSON merge patch, JSON patch (RFC 6902) and strategic merge patch with kubectl's directives.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

const CM = "/api/v1/namespaces/default/configmaps/cfg";
const DEP = "/apis/apps/v1/namespaces/default/deployments/web";

describe("kube-server: patch", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer();
    server.put(configMap("cfg", { a: "1", b: "2" }, { app: "x" }));
    server.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            containers: [
              { name: "app", image: "a:1" },
              { name: "side", image: "s:1" },
            ],
          },
        },
      },
    });
  });
  afterEach(async () => server.close());

  it("merge patch sets, replaces and deletes (null) fields", async () => {
    const r = await call(
      server,
      "PATCH",
      CM,
      { data: { a: null, c: "3" }, metadata: { labels: { tier: "t" } } },
      { contentType: "application/merge-patch+json" },
    );
    expect(r.status).to.equal(200);
    expect(r.body.data).to.deep.equal({ b: "2", c: "3" });
    expect(r.body.metadata.labels).to.deep.equal({ app: "x", tier: "t" });
  });

  it("JSON patch applies add/replace/remove/test in order and fails whole on a failed test", async () => {
    const ok = await call(
      server,
      "PATCH",
      CM,
      [
        { op: "test", path: "/data/a", value: "1" },
        { op: "replace", path: "/data/a", value: "9" },
        { op: "remove", path: "/data/b" },
        { op: "add", path: "/metadata/labels/new~1key", value: "v" },
      ],
      { contentType: "application/json-patch+json" },
    );
    expect(ok.status).to.equal(200);
    expect(ok.body.data).to.deep.equal({ a: "9" });
    expect(ok.body.metadata.labels).to.deep.equal({ app: "x", "new/key": "v" });
    const failed = await call(
      server,
      "PATCH",
      CM,
      [
        { op: "replace", path: "/data/a", value: "0" },
        { op: "test", path: "/data/a", value: "nope" },
      ],
      { contentType: "application/json-patch+json" },
    );
    expect(failed.status).to.equal(422);
    expect(server.get("v1", "ConfigMap", "default", "cfg")!.data).to.deep.equal({ a: "9" });
  });

  it(
    "strategic merge patch merges containers by name, deletes with $patch and orders with " + "$setElementOrder",
    async () => {
      const r = await call(
        server,
        "PATCH",
        DEP,
        {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: "app", image: "a:2" },
                  { name: "side", $patch: "delete" },
                  { name: "new", image: "n:1" },
                ],
                "$setElementOrder/containers": [{ name: "new" }, { name: "app" }],
              },
            },
          },
        },
        { contentType: "application/strategic-merge-patch+json" },
      );
      expect(r.status).to.equal(200);
      expect(r.body.spec.template.spec.containers).to.deep.equal([
        { name: "new", image: "n:1" },
        { name: "app", image: "a:2" },
      ]);
      expect(r.body.metadata.generation).to.equal(2);
    },
  );

  it("answers 415 for an unknown patch type and 404 for a missing object", async () => {
    expect((await call(server, "PATCH", CM, { data: {} }, { contentType: "application/xml" })).status).to.equal(415);
    expect(
      (
        await call(
          server,
          "PATCH",
          "/api/v1/namespaces/default/configmaps/none",
          { data: {} },
          { contentType: "application/merge-patch+json" },
        )
      ).status,
    ).to.equal(404);
  });

  it("status writes change only status; main-resource writes keep the live status", async () => {
    const st = await call(
      server,
      "PATCH",
      `${DEP}/status`,
      { status: { replicas: 1, readyReplicas: 1 }, spec: { replicas: 7 } },
      { contentType: "application/merge-patch+json" },
    );
    expect(st.status).to.equal(200);
    expect(st.body.status).to.deep.equal({ replicas: 1, readyReplicas: 1 });
    expect(st.body.spec.replicas).to.equal(1);
    const main = await call(
      server,
      "PATCH",
      DEP,
      { status: { replicas: 5 }, spec: { replicas: 2 } },
      { contentType: "application/merge-patch+json" },
    );
    expect(main.body.status).to.deep.equal({ replicas: 1, readyReplicas: 1 });
    expect(main.body.spec.replicas).to.equal(2);
  });

  it("reads and writes the scale subresource", async () => {
    const scale = await call(server, "GET", `${DEP}/scale`);
    expect(scale.body).to.deep.include({ kind: "Scale", apiVersion: "autoscaling/v1" });
    expect(scale.body.spec).to.deep.equal({ replicas: 1 });
    expect(scale.body.status.selector).to.equal("app=web");
    const put = await call(server, "PUT", `${DEP}/scale`, { ...scale.body, spec: { replicas: 3 } });
    expect(put.status).to.equal(200);
    expect(put.body.spec.replicas).to.equal(3);
    const negative = await call(
      server,
      "PATCH",
      `${DEP}/scale`,
      { spec: { replicas: -1 } },
      { contentType: "application/merge-patch+json" },
    );
    expect(negative.status).to.equal(422);
    expect((server.get("apps/v1", "Deployment", "default", "web")!.spec as any).replicas).to.equal(3);
  });
});
