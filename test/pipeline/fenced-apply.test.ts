// Writes carry what they were planned against: an update planned on a state that has changed since is refused by the
// server (409) and planned again on what is live, never applied blind; a plan whose record changed (another run wrote
// the cluster) is not written at all but planned again; a delete names the resourceVersion it saw.
import { expect } from "chai";
import { KubeClient } from "../../src/host/client.js";
import { syncCluster } from "../../src/pipeline/cluster.js";
import { applyPlan, StalePlanError } from "../../src/pipeline/apply.js";
import { buildPlan } from "../../src/plan/build.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import type { KubeObject } from "../../src/kube/object.js";
import { clusterObjects } from "../plan/fixtures.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const CONFIG = "/api/v1/namespaces/vc-a/configmaps/a-config";

describe("pipeline/apply: fenced writes", () => {
  let server: KubeServer;
  let target: KubeTarget;
  const opts = { prune: true, dryRun: false, allowMassPrune: false };

  beforeEach(async () => {
    server = await startKubeServer();
    target = new KubeTarget(
      KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      }),
    );
    await syncCluster(target, { cluster: "a", hostNamespace: "vc-a", desired: clusterObjects("a") }, opts);
  });
  afterEach(async () => {
    await target.close();
    await server.close();
  });

  /** The cluster's live objects as a plan reads them, then a change of its ConfigMap's data by another writer. */
  const stale = async (data: Record<string, string>): Promise<KubeObject[]> => {
    const live = await target.listInventory("a");
    await target.client.request("PATCH", CONFIG, {
      body: { data },
      contentType: "application/merge-patch+json",
      query: { fieldManager: "kubectl-edit" },
    });
    server.resetRequests();
    return live;
  };
  const desired = (data: Record<string, string>) => {
    const objs = clusterObjects("a");
    objs.find((o) => o.kind === "ConfigMap")!.data = data;
    return objs;
  };

  it("an update planned on a state changed since: 409, planned again on what is live, then written", async () => {
    const live = await stale({ a: "edited" });
    const res = await syncCluster(
      target,
      { cluster: "a", hostNamespace: "vc-a", desired: desired({ a: "2" }), live },
      opts,
    );
    expect(res.ok).to.equal(true);
    expect(res.counts.updated).to.equal(1);
    const patches = server.requests.filter((r) => r.method === "PATCH" && r.path === CONFIG);
    expect(patches.map((r) => r.status)).to.deep.equal([409, 200]);
    expect(server.requests.filter((r) => r.method === "GET" && r.path === CONFIG)).to.have.length(1);
    expect(server.get("v1", "ConfigMap", "vc-a", "a-config")!.data).to.deep.include({ a: "2" });
  });

  it("an update another writer already made as desired: planned again, found unchanged, not written", async () => {
    const live = await stale({ a: "2" });
    const res = await syncCluster(
      target,
      { cluster: "a", hostNamespace: "vc-a", desired: desired({ a: "2" }), live },
      opts,
    );
    expect(res.ok).to.equal(true);
    const result = res.results.find((r) => r.ref.name === "a-config")!;
    expect(result.outcome).to.equal("unchanged");
    expect(result.message).to.match(/changed since it was planned/);
    expect(server.requests.filter((r) => r.method === "PATCH" && r.path === CONFIG && r.status === 200)).to.deep.equal(
      [],
    );
  });

  it("a plan whose record changed since it was read writes nothing: StalePlanError, to plan it again", async () => {
    const live = await target.listInventory("a");
    const record = (await target.recordsByCluster(["a"])).get("a")!;
    const plan = buildPlan("a", desired({ a: "3" }), live, { prune: true, allowMassPrune: false, recorded: true });
    plan.hostNamespace = "vc-a";
    plan.recordVersion = record.resourceVersion!;
    // Another run records the cluster in between.
    await target.records.writeInventory("", "a", "vc-a", [...record.inventory, "v1/ConfigMap/vc-a/other"]);
    server.resetRequests();
    const err = await applyPlan(target, plan, opts).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StalePlanError);
    expect(server.requests.filter((r) => r.method === "PATCH" && r.path === CONFIG)).to.deep.equal([]);
  });

  it(
    "a delete carries the resourceVersion it saw: changed since, it is read again and deleted as " + "it is now",
    async () => {
      const live = await stale({ a: "edited" });
      const res = await syncCluster(
        target,
        {
          cluster: "a",
          hostNamespace: "vc-a",
          desired: clusterObjects("a").filter((o) => o.kind !== "ConfigMap"),
          live,
        },
        opts,
      );
      expect(res.counts.deleted).to.equal(1);
      const deletes = server.requests.filter((r) => r.method === "DELETE" && r.path === CONFIG);
      expect(deletes.map((r) => r.status)).to.deep.equal([409, 200]);
    },
  );
});
