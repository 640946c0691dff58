// CRUD over HTTP against the test server: create, get, update with resourceVersion, delete, errors as Status objects.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

const CM = "/api/v1/namespaces/default/configmaps";

describe("kube-server: CRUD", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer();
  });
  afterEach(async () => server.close());

  it(
    "creates an object with uid, resourceVersion and creationTimestamp, and answers 409 AlreadyExists on a " +
      "second create",
    async () => {
      const created = await call(server, "POST", CM, configMap("a", { k: "v" }));
      expect(created.status).to.equal(201);
      expect(created.body.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
      expect(Number(created.body.metadata.resourceVersion)).to.be.greaterThan(0);
      expect(created.body.metadata.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const again = await call(server, "POST", CM, configMap("a"));
      expect(again.status).to.equal(409);
      expect(again.body).to.include({
        kind: "Status",
        status: "Failure",
        reason: "AlreadyExists",
        code: 409,
        message: 'configmaps "a" already exists',
      });
    },
  );

  it("answers 404 NotFound as a Status for a missing object", async () => {
    const r = await call(server, "GET", `${CM}/nope`);
    expect(r.status).to.equal(404);
    expect(r.body).to.deep.include({
      kind: "Status",
      apiVersion: "v1",
      reason: "NotFound",
      message: 'configmaps "nope" not found',
    });
    expect(r.body.details).to.deep.include({ name: "nope", kind: "configmaps" });
  });

  it("updates with the current resourceVersion and refuses a stale one with 409 Conflict", async () => {
    const created = (await call(server, "POST", CM, configMap("a", { k: "1" }))).body;
    const ok = await call(server, "PUT", `${CM}/a`, { ...created, data: { k: "2" } });
    expect(ok.status).to.equal(200);
    expect(Number(ok.body.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion));
    expect(ok.body.metadata.uid).to.equal(created.metadata.uid);
    const stale = await call(server, "PUT", `${CM}/a`, { ...created, data: { k: "3" } });
    expect(stale.status).to.equal(409);
    expect(stale.body.reason).to.equal("Conflict");
    expect(stale.body.message).to.equal(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(server.get("v1", "ConfigMap", "default", "a")!.data).to.deep.equal({ k: "2" });
  });

  it("leaves the resourceVersion alone for writes that change nothing", async () => {
    const created = (await call(server, "POST", CM, configMap("same", { k: "1" }))).body;
    const put = await call(server, "PUT", `${CM}/same`, created);
    expect(put.body.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
    const patched = await call(
      server,
      "PATCH",
      `${CM}/same`,
      { data: { k: "1" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(patched.body.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
    const changed = await call(
      server,
      "PATCH",
      `${CM}/same`,
      { data: { k: "2" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(changed.body.metadata.resourceVersion).to.not.equal(created.metadata.resourceVersion);
  });

  it("rejects invalid names with 422 and a namespace mismatch with 400", async () => {
    const bad = await call(server, "POST", CM, configMap("Bad_Name"));
    expect(bad.status).to.equal(422);
    expect(bad.body.reason).to.equal("Invalid");
    expect(bad.body.message).to.match(
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const missing = await call(server, "POST", CM, { apiVersion: "v1", kind: "ConfigMap", metadata: {} });
    expect(missing.status).to.equal(422);
    expect(missing.body.message).to.equal(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
    const mismatch = await call(server, "POST", CM, configMap("x", {}, undefined, "other"));
    expect(mismatch.status).to.equal(400);
    expect(mismatch.body.message).to.equal(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("refuses a create of a namespaced kind outside a namespace with 405", async () => {
    const r = await call(server, "POST", "/api/v1/configmaps", configMap("a"));
    expect(r.status).to.equal(405);
    expect(r.body.reason).to.equal("MethodNotAllowed");
  });

  it("refuses to create in a namespace that does not exist", async () => {
    const r = await call(server, "POST", "/api/v1/namespaces/ghost/configmaps", configMap("a", {}, undefined, "ghost"));
    expect(r.status).to.equal(404);
    expect(r.body.message).to.equal('namespaces "ghost" not found');
  });

  it("bumps generation only when the spec of a workload changes", async () => {
    const dep = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "default" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "d" } },
        template: { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "c", image: "i:1" }] } },
      },
    };
    const created = (await call(server, "POST", "/apis/apps/v1/namespaces/default/deployments", dep)).body;
    expect(created.metadata.generation).to.equal(1);
    const labelled = (
      await call(
        server,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/d",
        { metadata: { labels: { x: "y" } } },
        { contentType: "application/merge-patch+json" },
      )
    ).body;
    expect(labelled.metadata.generation).to.equal(1);
    const scaled = (
      await call(
        server,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/d",
        { spec: { replicas: 3 } },
        { contentType: "application/merge-patch+json" },
      )
    ).body;
    expect(scaled.metadata.generation).to.equal(2);
    expect(created.metadata).to.not.have.property("managedFields", undefined);
    const cm = (await call(server, "POST", CM, configMap("c"))).body;
    expect(cm.metadata).to.not.have.property("generation");
  });

  it("deletes an object and answers a Success Status; dryRun=All stores nothing", async () => {
    await call(server, "POST", CM, configMap("a"));
    const dry = await call(server, "DELETE", `${CM}/a?dryRun=All`);
    expect(dry.status).to.equal(200);
    expect(server.get("v1", "ConfigMap", "default", "a")).to.not.equal(undefined);
    const del = await call(server, "DELETE", `${CM}/a`);
    expect(del.body).to.deep.include({ kind: "Status", status: "Success" });
    expect(del.body.details).to.include({ name: "a", kind: "configmaps" });
    expect(server.get("v1", "ConfigMap", "default", "a")).to.equal(undefined);
    const live = server.put(configMap("c", { k: "1" }));
    const dryPut = await call(server, "PUT", `${CM}/c?dryRun=All`, { ...live, data: { k: "2" } });
    expect(dryPut.body.data).to.deep.equal({ k: "2" });
    const dryPatch = await call(
      server,
      "PATCH",
      `${CM}/c?dryRun=All`,
      { data: { k: "3" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(dryPatch.body.data).to.deep.equal({ k: "3" });
    expect(server.get("v1", "ConfigMap", "default", "c")).to.deep.equal(live);
    const dryCreate = await call(server, "POST", `${CM}?dryRun=All`, configMap("b"));
    expect(dryCreate.status).to.equal(201);
    expect(dryCreate.body.metadata.name).to.equal("b");
    expect(server.get("v1", "ConfigMap", "default", "b")).to.equal(undefined);
  });
});
