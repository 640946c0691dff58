import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../../support/kube-server/index.js";
import { KubeClient } from "../../../src/host/client.js";
import { KubeTarget, INVENTORY_TYPES } from "../../../src/sinks/kube/target.js";
import { syncCluster } from "../../../src/pipeline/cluster.js";
import { buildPlan } from "../../../src/plan/build.js";
import { LABELS } from "../../../src/translate/keys.js";
import type { KubeObject } from "../../../src/kube/object.js";
import { clusterObjects } from "../../plan/fixtures.js";
import { describeProfiles } from "../../support/profiles.js";
import { recordName } from "../../../src/records/record.js";

const writes = (s: KubeServer) =>
  ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + s.countRequests({ method }), 0);
const sync = (
  t: KubeTarget,
  desired: KubeObject[],
  opts: Partial<{ prune: boolean; dryRun: boolean; allowMassPrune: boolean }> = {},
) =>
  syncCluster(
    t,
    { cluster: "a", hostNamespace: "vc-a", desired },
    { prune: true, dryRun: false, allowMassPrune: false, ...opts },
  );

describeProfiles("target/kube against the test API server", (profile) => {
  let server: KubeServer;
  let client: KubeClient;
  let target: KubeTarget;

  beforeEach(async () => {
    server = await startKubeServer({ profile });
    client = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    target = new KubeTarget(client);
  });
  afterEach(async () => {
    await target.close();
    await server.close();
  });

  it("creates every object with server-side apply as field manager vc, namespace first", async () => {
    const result = await sync(target, clusterObjects("a"));
    expect(result.ok).to.equal(true);
    expect(result.counts.created).to.equal(6);
    // The cluster's record first, created with the run's apply lease and what it will create: before its first write
    // the records namespace is looked up, found missing and made with the platform mark (a POST that fails if someone
    // made it meanwhile). Then six objects; then the lease is given up.
    const patches = server.requests.filter(
      (r) => r.method === "PATCH" && r.namespace !== "vc-system" && r.name !== "vc-system",
    );
    expect(patches).to.have.length(6);
    expect(server.countRequests({ method: "POST", path: "/api/v1/namespaces/vc-system/configmaps" })).to.equal(1);
    expect(server.countRequests({ method: "PATCH" })).to.equal(6 + 1);
    expect(server.countRequests({ method: "POST", resource: "namespaces" })).to.equal(1);
    expect(server.get("v1", "Namespace", "", "vc-system")!.metadata.labels).to.deep.include({
      "vc.orch.io/platform-namespace": "true",
    });
    expect(
      JSON.parse(
        (server.get("v1", "ConfigMap", "vc-system", recordName("", "a"))!.data as Record<string, string>).inventory!,
      ),
    ).to.have.length(6);
    expect(patches[0]!.resource).to.equal("namespaces");
    expect(patches.every((r) => /fieldManager=vc/.test(r.query) && /force=true/.test(r.query))).to.equal(true);
    const sts = server.get("apps/v1", "StatefulSet", "vc-a", "a")!;
    expect((sts.metadata.managedFields as Array<{ manager: string }>).map((m) => m.manager)).to.include("vc");
    expect(sts.metadata.labels![LABELS.inventory]).to.equal("a");
  });

  it("a second run finds nothing to do: zero diff, zero writes, one LIST per kind", async () => {
    await sync(target, clusterObjects("a"));
    server.resetRequests();
    const result = await sync(target, clusterObjects("a"));
    expect(result.plan.counts).to.deep.equal({ create: 0, update: 0, delete: 0, unchanged: 6 });
    expect(result.plan.changes.every((c) => !c.diff)).to.equal(true);
    expect(writes(server)).to.equal(0);
    // One LIST per kind and one of the records (a target without a source reads each cluster's holder's record and
    // refuses nobody: no claims are listed).
    expect(server.countRequests({ method: "GET" })).to.equal(INVENTORY_TYPES.length + 1);
    const inventory = server.requests.filter((r) => r.namespace !== "vc-system");
    expect(inventory).to.have.length(INVENTORY_TYPES.length);
    expect(
      inventory.every((r) => decodeURIComponent(r.query).includes(`labelSelector=${LABELS.inventory}=a`)),
    ).to.equal(true);
  });

  it("updates only the object that changed", async () => {
    await sync(target, clusterObjects("a"));
    server.resetRequests();
    const next = clusterObjects("a");
    next.find((o) => o.kind === "ConfigMap")!.data = { a: "2", b: "3" };
    const result = await sync(target, next);
    expect(result.counts).to.include({ updated: 1, unchanged: 5 });
    // The one object, fenced by the resourceVersion it was planned against; the record: the apply lease taken, given
    // up.
    expect(server.countRequests({ method: "PATCH", path: "/api/v1/namespaces/vc-a/configmaps/a-config" })).to.equal(1);
    expect(server.countRequests({ method: "PATCH" })).to.equal(1 + 2);
    expect(server.get("v1", "ConfigMap", "vc-a", "a-config")!.data).to.deep.equal({ a: "2", b: "3" });
  });

  it("shows drift made by another writer and corrects it, leaving the other writer's own fields alone", async () => {
    await sync(target, clusterObjects("a"));
    await client.request("PATCH", "/api/v1/namespaces/vc-a/configmaps/a-config", {
      query: { fieldManager: "kubectl-edit" },
      contentType: "application/merge-patch+json",
      body: { metadata: { labels: { team: "x" } }, data: { a: "hand-edited" } },
    });
    const live = await target.listInventory("a");
    const plan = buildPlan("a", clusterObjects("a"), live, { prune: true, allowMassPrune: false });
    const change = plan.changes.find((c) => c.ref.kind === "ConfigMap")!;
    expect(change.action).to.equal("update");
    expect(change.diff).to.include("-  a: hand-edited").and.include("+  a: '1'").and.not.include("team");
    const result = await sync(target, clusterObjects("a"));
    expect(result.counts.updated).to.equal(1);
    const cm = server.get("v1", "ConfigMap", "vc-a", "a-config")!;
    expect(cm.data).to.deep.equal({ a: "1" });
    expect(cm.metadata.labels!.team).to.equal("x");
    expect((await sync(target, clusterObjects("a"))).counts.unchanged).to.equal(6);
  });

  it("removes a field vc applied before and no longer renders", async () => {
    const first = clusterObjects("a");
    first.find((o) => o.kind === "ConfigMap")!.data = { a: "1", old: "x" };
    await sync(target, first);
    const result = await sync(target, clusterObjects("a"));
    expect(result.plan.changes.find((c) => c.ref.kind === "ConfigMap")!.diff).to.include("-  old: x");
    expect(server.get("v1", "ConfigMap", "vc-a", "a-config")!.data).to.deep.equal({ a: "1" });
  });

  it(
    "prunes what the repository dropped, never a foreign object of the same name, never the unlabelled status " +
      "ConfigMap",
    async () => {
      await sync(target, clusterObjects("a"));
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a-config", namespace: "default" },
        data: { mine: "yes" },
      });
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "vc-status-a", namespace: "vc-a", labels: { [LABELS.managedBy]: "a" } },
        data: {},
      });
      const desired = clusterObjects("a").filter((o) => o.kind !== "ConfigMap");
      const result = await sync(target, desired);
      expect(result.counts.deleted).to.equal(1);
      expect(server.get("v1", "ConfigMap", "vc-a", "a-config")).to.equal(undefined);
      expect(server.get("v1", "ConfigMap", "default", "a-config")!.data).to.deep.equal({ mine: "yes" });
      expect(server.get("v1", "ConfigMap", "vc-a", "vc-status-a")).to.not.equal(undefined);
    },
  );

  it("does not delete an object replaced, between the LIST and the delete, by one without vc's label", async () => {
    await sync(target, clusterObjects("a"));
    const live = (await target.listInventory("a")).find((o) => o.kind === "ConfigMap")!;
    server.remove("v1", "ConfigMap", "vc-a", "a-config");
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a-config", namespace: "vc-a" },
      data: { foreign: "1" },
    });
    expect(await target.delete(live, "a", { dryRun: false })).to.equal("not-owned");
    expect(server.get("v1", "ConfigMap", "vc-a", "a-config")!.data).to.deep.equal({ foreign: "1" });
    expect(server.countRequests({ method: "DELETE" })).to.equal(1); // refused by the uid precondition
  });

  it("stops a mass prune with a clear message and changes nothing, unless allowed", async () => {
    await sync(target, clusterObjects("a"));
    server.resetRequests();
    const few = clusterObjects("a").filter((o) => o.kind === "Namespace" || o.kind === "ServiceAccount");
    const blocked = await sync(target, few);
    expect(blocked.ok).to.equal(false);
    expect(blocked.plan.blocked).to.match(/would delete 4 of 6/);
    expect(blocked.counts.skipped).to.equal(4);
    expect(writes(server)).to.equal(0);
    const allowed = await sync(target, few, { allowMassPrune: true });
    expect(allowed.counts.deleted).to.equal(4);
    expect(server.list("apps/v1", "StatefulSet", "vc-a")).to.have.length(0);
    // Deletes went in reverse order: the mesh object first, the ConfigMap/Secret last.
    const deleted = server.requests.filter((r) => r.method === "DELETE").map((r) => r.resource);
    expect(deleted).to.deep.equal(["virtualservices", "statefulsets", "configmaps", "secrets"]);
  });

  it("a dry run asks the server (dryRun=All) and stores nothing", async () => {
    await sync(
      target,
      clusterObjects("a").filter((o) => o.kind === "Namespace"),
    );
    const result = await sync(target, clusterObjects("a"), { dryRun: true, prune: false });
    expect(result.counts.created).to.equal(5);
    expect(server.requests.filter((r) => r.method === "PATCH" && /dryRun=All/.test(r.query))).to.have.length(5);
    expect(server.list("v1", "ConfigMap", "vc-a")).to.have.length(0);
  });

  for (const [name, fault] of [
    ["409 conflict", { status: 409 }],
    ["500 server error", { status: 500 }],
    ["503 unavailable", { status: 503 }],
    ["connection reset", { reset: true }],
  ] as const) {
    it(`retries a ${name} in the middle of an apply and converges`, async () => {
      const handle = server.faults.add({ method: "PATCH", nth: 3, times: 2, ...fault });
      const result = await sync(target, clusterObjects("a"));
      expect(handle.fired).to.equal(2);
      expect(result.ok, JSON.stringify(result.results.filter((r) => r.outcome === "failed"))).to.equal(true);
      expect(result.counts.created).to.equal(6);
      expect(client.stats.retries).to.equal(2);
      expect((await sync(target, clusterObjects("a"))).counts.unchanged).to.equal(6);
    });
  }

  it("honours Retry-After on a 429", async () => {
    server.faults.add({ method: "PATCH", nth: 2, status: 429, retryAfterSeconds: 1 });
    const delays: number[] = [];
    const waiting = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      onRetry: (r) => delays.push(r.delayMs),
    });
    try {
      const result = await sync(new KubeTarget(waiting), clusterObjects("a"));
      expect(result.ok).to.equal(true);
      expect(waiting.stats.retries).to.equal(1);
      expect(delays, "the wait the server asked for, not the 5-20 ms backoff").to.deep.equal([1000]);
    } finally {
      waiting.close();
    }
  });

  it("a run cut off half way loses nothing and prunes nothing; the next run converges", async () => {
    await sync(target, clusterObjects("a"));
    const next = clusterObjects("a").filter((o) => o.kind !== "VirtualService");
    next.find((o) => o.kind === "ConfigMap")!.data = { a: "2" };
    next.find((o) => o.kind === "StatefulSet")!.spec = {
      replicas: 2,
      template: { spec: { containers: [{ name: "syncer", image: "vc:2" }] } },
    };
    const down = server.faults.add({ method: "PATCH", path: /statefulsets/, status: 500 });
    const cut = await sync(target, next);
    expect(cut.ok).to.equal(false);
    expect(cut.counts).to.include({ updated: 1, failed: 1, skipped: 1 });
    expect(cut.results.find((r) => r.outcome === "failed")!.message).to.match(/500/);
    expect(server.get("v1", "ConfigMap", "vc-a", "a-config")!.data).to.deep.equal({ a: "2" });
    expect(server.list("networking.mesh.io/v1beta1", "VirtualService", "vc-a")).to.have.length(1);
    down.remove();
    const again = await sync(target, next);
    expect(again.ok).to.equal(true);
    expect(again.counts).to.include({ updated: 1, deleted: 1, unchanged: 4 });
    expect((server.get("apps/v1", "StatefulSet", "vc-a", "a")!.spec as { replicas: number }).replicas).to.equal(2);
  });

  it("gives up after the retry budget with the server's message", async () => {
    server.faults.add({ method: "PATCH", path: /namespaces\/vc-a\/configmaps/, status: 500 });
    const result = await sync(target, clusterObjects("a"));
    const failed = result.results.find((r) => r.outcome === "failed")!;
    expect(failed.ref.kind).to.equal("ConfigMap");
    expect(failed.message).to.match(/PATCH \/api\/v1\/namespaces\/vc-a\/configmaps\/a-config: 500/);
  });

  it("reads a whole fleet's inventory with one LIST per kind", async () => {
    for (const c of ["a", "b", "c"])
      await syncCluster(
        target,
        { cluster: c, hostNamespace: `vc-${c}`, desired: clusterObjects(c) },
        { prune: true, dryRun: false, allowMassPrune: false },
      );
    server.resetRequests();
    const fleet = await target.listFleetInventory();
    expect([...fleet.keys()].sort()).to.deep.equal(["a", "b", "c"]);
    expect(fleet.get("b")).to.have.length(6);
    // One LIST per kind, and one of the records that say which of the labelled objects are vc's.
    expect(server.countRequests({ method: "GET" })).to.equal(INVENTORY_TYPES.length + 1);
  });

  it("masks a Secret's values in an error message the server echoes them in", async () => {
    const body = JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code: 422,
      reason: "Invalid",
      message: 'Secret "a-db" is invalid: stringData[url]: Invalid value: "postgres://u:hunter2@db/x"',
    });
    server.faults.add({ method: "PATCH", path: /secrets/, status: 422, body });
    const result = await sync(target, clusterObjects("a"));
    const failed = result.results.find((r) => r.outcome === "failed")!;
    expect(failed.ref.kind).to.equal("Secret");
    expect(failed.message).to.include('Invalid value: "<masked>"').and.not.include("hunter2");
  });

  it("finds and prunes what was left in the old namespace when a cluster moves to another one", async () => {
    await sync(target, clusterObjects("a"));
    const moved = clusterObjects("a").map((o) => {
      const m = structuredClone(o);
      if (m.kind === "Namespace") m.metadata.name = "vc-a2";
      else m.metadata.namespace = "vc-a2";
      return m;
    });
    const blocked = await syncCluster(
      target,
      { cluster: "a", hostNamespace: "vc-a2", desired: moved },
      { prune: true, dryRun: false, allowMassPrune: false },
    );
    expect(blocked.plan.blocked).to.match(/would delete all 6/);
    const result = await syncCluster(
      target,
      { cluster: "a", hostNamespace: "vc-a2", desired: moved },
      { prune: true, dryRun: false, allowMassPrune: true },
    );
    expect(result.counts).to.include({ created: 6, deleted: 5 });
    expect(server.list("v1", "ConfigMap", "vc-a2")).to.have.length(1);
    expect(
      server.list("v1", "ConfigMap", "vc-a").filter((c) => c.metadata.labels?.[LABELS.inventory] === "a"),
    ).to.have.length(0);
    // The old namespace is kept (it may hold volume claims and objects vc does not own) and reported.
    expect(server.get("v1", "Namespace", undefined, "vc-a")).to.not.equal(undefined);
    expect(result.plan.retained!.map((r) => r.ref.name)).to.deep.equal(["vc-a"]);
  });
});
