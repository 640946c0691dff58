// Server-side apply over HTTP: managedFields, removal of dropped fields, shared ownership, keyed lists, conflicts and
// force.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call } from "./helpers.js";

const DEP = "/apis/apps/v1/namespaces/default/deployments/web";
const CM = "/api/v1/namespaces/default/configmaps/cfg";
const APPLY = { contentType: "application/apply-patch+yaml" };

function deployment(containers: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers } },
      ...extra,
    },
  };
}

function managers(obj: any): Record<string, any> {
  return Object.fromEntries(
    (obj.metadata.managedFields ?? []).map((m: any) => [`${m.manager}/${m.operation}`, m.fieldsV1]),
  );
}

describe("kube-server: server-side apply", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer();
  });
  afterEach(async () => server.close());

  it("creates with 201 and records the applied fields, list items keyed by name", async () => {
    const r = await call(
      server,
      "PATCH",
      `${DEP}?fieldManager=ci`,
      deployment([{ name: "app", image: "nginx:1", ports: [{ containerPort: 80 }] }]),
      APPLY,
    );
    expect(r.status).to.equal(201);
    expect(r.body.metadata.generation).to.equal(1);
    const fields = managers(r.body)["ci/Apply"];
    expect(fields["f:spec"]["f:template"]["f:spec"]["f:containers"]).to.deep.equal({
      'k:{"name":"app"}': {
        ".": {},
        "f:image": {},
        "f:name": {},
        "f:ports": { 'k:{"containerPort":80}': { ".": {}, "f:containerPort": {} } },
      },
    });
    expect(r.body.metadata.managedFields[0]).to.include({
      manager: "ci",
      operation: "Apply",
      apiVersion: "apps/v1",
      fieldsType: "FieldsV1",
    });
  });

  it("requires fieldManager", async () => {
    const r = await call(
      server,
      "PATCH",
      CM,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" } },
      APPLY,
    );
    expect(r.status).to.equal(400);
    expect(r.body.message).to.include("requires fieldManager");
  });

  it("accepts YAML bodies and leaves the resourceVersion alone when nothing changes", async () => {
    const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n";
    const first = await call(server, "PATCH", `${CM}?fieldManager=ci`, yaml, APPLY);
    expect(first.status).to.equal(201);
    const second = await call(server, "PATCH", `${CM}?fieldManager=ci`, yaml, APPLY);
    expect(second.status).to.equal(200);
    expect(second.body.metadata.resourceVersion).to.equal(first.body.metadata.resourceVersion);
  });

  it("removes fields the manager no longer applies, unless another manager owns them", async () => {
    const cfg = (data?: Record<string, string>, labels?: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg", ...(labels ? { labels } : {}) },
      ...(data ? { data } : {}),
    });
    await call(server, "PATCH", `${CM}?fieldManager=a`, cfg({ x: "1", y: "2" }, { team: "a", shared: "yes" }), APPLY);
    // b co-owns `shared` and `y` by applying the same values.
    const co = await call(server, "PATCH", `${CM}?fieldManager=b`, cfg({ y: "2" }, { shared: "yes" }), APPLY);
    expect(co.status).to.equal(200);
    const dropped = await call(server, "PATCH", `${CM}?fieldManager=a`, cfg(), APPLY);
    expect(dropped.status).to.equal(200);
    expect(dropped.body.data).to.deep.equal({ y: "2" });
    expect(dropped.body.metadata.labels).to.deep.equal({ shared: "yes" });
    expect(managers(dropped.body)).to.not.have.property("a/Apply");
  });

  it("merges keyed lists between managers and removes only the dropping manager's items", async () => {
    await call(server, "PATCH", `${DEP}?fieldManager=a`, deployment([{ name: "app", image: "app:1" }]), APPLY);
    const both = await call(
      server,
      "PATCH",
      `${DEP}?fieldManager=b`,
      deployment([{ name: "sidecar", image: "proxy:1" }]),
      APPLY,
    );
    expect(both.body.spec.template.spec.containers.map((c: any) => c.name).sort()).to.deep.equal(["app", "sidecar"]);
    const bGone = await call(server, "PATCH", `${DEP}?fieldManager=b`, deployment([]), APPLY);
    expect(bGone.body.spec.template.spec.containers).to.deep.equal([{ name: "app", image: "app:1" }]);
  });

  it("answers 409 with every conflicting field and manager, and force moves ownership", async () => {
    await call(server, "POST", "/api/v1/namespaces/default/configmaps?fieldManager=editor", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg" },
      data: { a: "1", b: "1" },
    });
    const clash = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "2", b: "2" } },
      APPLY,
    );
    expect(clash.status).to.equal(409);
    expect(clash.body.reason).to.equal("Conflict");
    expect(clash.body.message).to.match(
      /^Apply failed with 2 conflicts: conflicts with "editor" using v1 at \S+:\n- \.data\.a\n- \.data\.b$/,
    );
    expect(clash.body.details.causes).to.deep.include({
      reason: "FieldManagerConflict",
      message: clash.body.details.causes[0].message,
      field: ".data.a",
    });
    expect(server.get("v1", "ConfigMap", "default", "cfg")!.data).to.deep.equal({ a: "1", b: "1" });

    const forced = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci&force=true`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "2" } },
      APPLY,
    );
    expect(forced.status).to.equal(200);
    expect(forced.body.data).to.deep.equal({ a: "2", b: "1" });
    expect(managers(forced.body)["ci/Apply"]).to.deep.equal({ "f:data": { "f:a": {} } });
    expect(managers(forced.body)["editor/Update"]).to.deep.equal({ "f:data": { "f:b": {} } });
  });

  it("treats an object without managedFields as owned by before-first-apply", async () => {
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg", namespace: "default" },
      data: { a: "1", b: "1" },
    });
    const clash = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "2" } },
      APPLY,
    );
    expect(clash.status).to.equal(409);
    expect(clash.body.message).to.match(
      /^Apply failed with 1 conflict: conflict with "before-first-apply" using v1 at \S+: \.data\.a$/,
    );
    const forced = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci&force=true`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "2" } },
      APPLY,
    );
    expect(managers(forced.body)).to.deep.equal({
      "before-first-apply/Update": { "f:data": { "f:b": {} } },
      "ci/Apply": { "f:data": { "f:a": {} } },
    });
    const dropped = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" } },
      APPLY,
    );
    expect(dropped.body.data).to.deep.equal({ b: "1" });
  });

  it("gives an update the fields it changed, taking them from the applier", async () => {
    await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } },
      APPLY,
    );
    const edited = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=kubectl-edit`,
      { data: { a: "9" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(managers(edited.body)).to.deep.equal({ "kubectl-edit/Update": { "f:data": { "f:a": {} } } });
    const reapply = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } },
      APPLY,
    );
    expect(reapply.status).to.equal(409);
    expect(reapply.body.message).to.match(
      /^Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at \S+: \.data\.a$/,
    );
  });

  it("applies to the status subresource: status only, under a manager with subresource status", async () => {
    await call(
      server,
      "PATCH",
      `${DEP}?fieldManager=ci`,
      deployment([{ name: "app", image: "a:1" }], { replicas: 2 }),
      APPLY,
    );
    const r = await call(
      server,
      "PATCH",
      `${DEP}/status?fieldManager=controller`,
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: { replicas: 9 },
        status: { readyReplicas: 2 },
      },
      APPLY,
    );
    expect(r.status).to.equal(200);
    expect(r.body.status).to.deep.equal({ readyReplicas: 2 });
    expect(r.body.spec.replicas).to.equal(2);
    const entry = r.body.metadata.managedFields.find((m: any) => m.manager === "controller");
    expect(entry).to.deep.include({
      operation: "Apply",
      subresource: "status",
      fieldsV1: { "f:status": { "f:readyReplicas": {} } },
    });
    const main = await call(
      server,
      "PATCH",
      `${DEP}?fieldManager=ci`,
      deployment([{ name: "app", image: "a:2" }], { replicas: 2 }),
      APPLY,
    );
    expect(main.body.status).to.deep.equal({ readyReplicas: 2 });
    expect(
      (
        await call(
          server,
          "PATCH",
          `/apis/apps/v1/namespaces/default/deployments/none/status?fieldManager=c`,
          { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "none" }, status: {} },
          APPLY,
        )
      ).status,
    ).to.equal(404);
  });

  it("dryRun=All answers the merged object and stores nothing", async () => {
    const r = await call(
      server,
      "PATCH",
      `${CM}?fieldManager=ci&dryRun=All`,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } },
      APPLY,
    );
    expect(r.status).to.equal(201);
    expect(r.body.data).to.deep.equal({ a: "1" });
    expect(server.get("v1", "ConfigMap", "default", "cfg")).to.equal(undefined);
    expect(
      (
        await call(
          server,
          "PATCH",
          `${CM}?fieldManager=ci&dryRun=Some`,
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" } },
          APPLY,
        )
      ).status,
    ).to.equal(400);
  });

  it(
    "refuses a stale resourceVersion in the applied configuration and a kind that does not match " + "the URL",
    async () => {
      const first = await call(
        server,
        "PATCH",
        `${CM}?fieldManager=ci`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "1" } },
        APPLY,
      );
      await call(
        server,
        "PATCH",
        `${CM}?fieldManager=ci`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { a: "2" } },
        APPLY,
      );
      const stale = await call(
        server,
        "PATCH",
        `${CM}?fieldManager=ci`,
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "cfg", resourceVersion: first.body.metadata.resourceVersion },
          data: { a: "3" },
        },
        APPLY,
      );
      expect(stale.status).to.equal(409);
      const wrongKind = await call(
        server,
        "PATCH",
        `${CM}?fieldManager=ci`,
        { apiVersion: "v1", kind: "Secret", metadata: { name: "cfg" } },
        APPLY,
      );
      expect(wrongKind.status).to.equal(400);
    },
  );
});
