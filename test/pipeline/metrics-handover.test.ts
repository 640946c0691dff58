// The hand-over of a cluster from its own metrics proxy of before to the host's shared one, through the one pipeline:
// held (the old proxy kept as live, told --apiservice "") until the shared proxy's status says it answers for the
// cluster; then the cluster's Service turns to the shared proxy and the old objects are pruned after it, in one run.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { objectKey, type KubeObject } from "../../src/kube/object.js";
import { formatReplicaStatus } from "../../src/model/proxy-status.js";
import { applyFleet, planFleet } from "../../src/pipeline/fleet.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { LABELS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { legacyMetricsProxy } from "../support/legacy-metrics-proxy.js";

const REV = "0123456789abcdef0123456789abcdef01234567";
// The generated fleet turns the metrics integration on for every odd cluster.
const CLUSTER = fleetClusterName(1);
const NS = `vc-${CLUSTER}`;
const OLD = `vc-metrics-proxy-${CLUSTER}`;

describe("pipeline: the hand-over from a cluster's own metrics proxy to the shared one", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  let server: KubeServer;
  const target = () =>
    new KubeTarget(KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test", retry: { attempts: 1 } }));
  const apply = async (prune: boolean) => {
    const t = target();
    try {
      return await applyFleet(t, await loadDesiredIndex(repo, REV), { prune, allowMassPrune: false, dryRun: false });
    } finally {
      await t.close();
    }
  };
  const plan = async () => {
    const t = target();
    try {
      return await planFleet(t, await loadDesiredIndex(repo, REV), { prune: true, allowMassPrune: false });
    } finally {
      await t.close();
    }
  };
  const live = (kind: string, name: string, apiVersion = "v1", namespace: string | undefined = NS) =>
    server.get(apiVersion, kind, namespace ?? "", name);
  const recorded = async () => {
    const t = target();
    try {
      return (await t.recordsByCluster([CLUSTER])).get(CLUSTER)!.inventory;
    } finally {
      await t.close();
    }
  };
  const status = (ready: string[], at = new Date()) =>
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "vc-metrics-proxy-status", namespace: "vc-system" },
      data: {
        "proxy-0": formatReplicaStatus({
          at: at.toISOString(),
          intervalSeconds: 60,
          clusters: 1,
          loaded: 1,
          ready,
          waiting: {},
          failed: {},
        }),
      },
    });

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-handover-"));
    repo = join(tmp, "repo");
    server = await startKubeServer();
    // vc-system as deploy/reconciler/namespace.yaml makes it: a platform namespace (records and the proxy's status).
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    await generateFleet(repo, { clusters: 2, meshPerCluster: 1 });
    expect((await apply(true)).results.every((r) => r.ok)).to.equal(true);
    // The state an earlier vc left: the cluster's own proxy, recorded; no access Role, no mark on the Namespace.
    const t = target();
    try {
      const access = `vc-metrics-proxy-access-${CLUSTER}`;
      for (const kind of ["Role", "RoleBinding"]) server.remove("rbac.authorization.k8s.io/v1", kind, NS, access);
      const ns = server.get("v1", "Namespace", "", NS)!;
      delete ns.metadata.labels![LABELS.metricsProxy];
      server.put(ns);
      server.remove("v1", "Service", NS, OLD);
      const old = legacyMetricsProxy(CLUSTER, NS);
      for (const o of old) await t.apply(o, { dryRun: false });
      const keys = (await recorded()).filter((k) => !k.includes(access));
      await t.recordInventory(CLUSTER, NS, new Set([...keys, ...old.map(objectKey)]));
    } finally {
      await t.close();
    }
  });
  after(async () => {
    await server?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const args = () =>
    (live("Deployment", OLD, "apps/v1") as KubeObject & { spec: any }).spec.template.spec.containers[0]
      .args as string[];

  it(
    "holds the old proxy while the shared one has not said it " + 'answers for the cluster: kept, told --apiservice ""',
    async () => {
      const report = await plan();
      const changes = report.plans.find((p) => p.cluster === CLUSTER)!.changes.filter((c) => c.action !== "unchanged");
      expect(changes.map((c) => `${c.action} ${c.ref.kind}/${c.ref.name}`).sort()).to.deep.equal([
        `create Role/vc-metrics-proxy-access-${CLUSTER}`,
        `create RoleBinding/vc-metrics-proxy-access-${CLUSTER}`,
        `update Deployment/${OLD}`,
        `update Namespace/${NS}`,
      ]);
      expect((await apply(true)).results.every((r) => r.ok)).to.equal(true);
      expect(args().slice(-2)).to.deep.equal(["--apiservice", ""]);
      expect((live("Service", OLD) as any).spec.type).to.equal("ClusterIP");
      expect(live("ClusterRole", `${OLD}-x-${NS}`, "rbac.authorization.k8s.io/v1", undefined)).to.not.equal(undefined);
      expect(await recorded()).to.include(`apps/Deployment/${NS}/${OLD}`);
      // Stable: a second run changes nothing.
      const again = (await plan()).plans.find((p) => p.cluster === CLUSTER)!;
      expect(again.changes.filter((c) => c.action !== "unchanged")).to.deep.equal([]);
    },
  );

  it("keeps holding on a status that is stale, of another cluster, or not there", async () => {
    status([`${NS}/${CLUSTER}`], new Date(Date.now() - 10 * 60_000));
    let p = (await plan()).plans.find((x) => x.cluster === CLUSTER)!;
    expect(p.changes.filter((c) => c.action !== "unchanged")).to.deep.equal([]);
    status([`vc-other/${CLUSTER}`]);
    p = (await plan()).plans.find((x) => x.cluster === CLUSTER)!;
    expect(p.changes.filter((c) => c.action !== "unchanged")).to.deep.equal([]);
  });

  it(
    "once the shared proxy answers for it: the Service turns to the " + "shared proxy, then the old objects are pruned",
    async () => {
      status([`${NS}/${CLUSTER}`]);
      server.resetRequests();
      const result = await apply(true);
      expect(result.results.every((r) => r.ok)).to.equal(true);
      const svc = live("Service", OLD) as any;
      expect(svc.spec).to.deep.include({
        type: "ExternalName",
        externalName: "vc-metrics-proxy.vc-system.svc.cluster.local",
      });
      expect(live("Deployment", OLD, "apps/v1")).to.equal(undefined);
      expect(live("ServiceAccount", OLD)).to.equal(undefined);
      expect(live("Role", OLD, "rbac.authorization.k8s.io/v1")).to.equal(undefined);
      expect(live("ClusterRole", `${OLD}-x-${NS}`, "rbac.authorization.k8s.io/v1", undefined)).to.equal(undefined);
      expect(live("ClusterRoleBinding", `${OLD}-x-${NS}`, "rbac.authorization.k8s.io/v1", undefined)).to.equal(
        undefined,
      );
      // The Service was turned before the Deployment went.
      const writes = server.requests.filter((r) => r.name === OLD && r.method !== "GET");
      expect(writes.map((r) => `${r.method} ${r.resource}`).slice(0, 2)).to.deep.equal([
        "PATCH services",
        "DELETE deployments",
      ]);
      expect((await recorded()).filter((k) => k.endsWith(`/${OLD}`))).to.deep.equal([`Service/${NS}/${OLD}`]);
      const after = (await plan()).plans.find((x) => x.cluster === CLUSTER)!;
      expect(after.changes.filter((c) => c.action !== "unchanged")).to.deep.equal([]);
    },
  );
});
