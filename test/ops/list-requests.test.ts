// `vc list` reads the host with one LIST per kind whatever the number of clusters, and its HEALTH column is what
// reading each cluster's health on its own (readClusterHealth) gives.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import type { ListRow } from "../../src/ops/list.js";
import { readClusterHealth } from "../../src/health/read.js";
import { loadDesired } from "../../src/pipeline/load.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { tempDir, vc } from "./helpers.js";

describe("ops: vc list's requests", function () {
  this.timeout(180_000);
  let server: KubeServer;
  let repo: string;
  let kc: string[];

  beforeEach(async () => {
    server = await startKubeServer();
    kc = ["--kubeconfig", server.kubeconfigPath];
    repo = tempDir();
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  /** A fleet of `n` applied clusters whose first three have control-plane pods: ready, crash-looping, unschedulable. */
  async function fleet(n: number): Promise<void> {
    await generateFleet(repo, { clusters: n, meshPerCluster: 1 });
    const applied = await vc(["apply", repo, "--target", "kube", ...kc]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    const names = Array.from({ length: n }, (_, i) => fleetClusterName(i)).sort();
    const pod = (i: number, status: unknown) =>
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: `${names[i]}-0`,
          namespace: `vc-${names[i]}`,
          labels: { release: names[i]!, app: "vc" },
          ownerReferences: [
            {
              apiVersion: "apps/v1",
              kind: "StatefulSet",
              name: names[i]!,
              uid: server.get("apps/v1", "StatefulSet", `vc-${names[i]}`, names[i]!)!.metadata.uid!,
              controller: true,
            },
          ],
        },
        spec: { containers: [{ name: "syncer", image: "x" }] },
        status,
      });
    pod(0, { phase: "Running", conditions: [{ type: "Ready", status: "True" }] });
    pod(1, {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False" }],
      containerStatuses: [{ name: "syncer", restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } } }],
    });
    pod(2, { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] });
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "e1", namespace: `vc-${names[2]}` },
      involvedObject: { kind: "Pod", name: `${names[2]}-0`, namespace: `vc-${names[2]}` },
      reason: "FailedScheduling",
      message: "0/3 nodes are available: 3 Insufficient memory.",
    });
  }

  async function list(): Promise<{ rows: ListRow[]; requests: number; table: string }> {
    server.resetRequests();
    const r = await vc(["list", "--repo", repo, "-o", "json", ...kc]);
    expect(r.code, r.stderr).to.equal(0);
    const requests = server.requests.length;
    const table = (await vc(["list", "--repo", repo, ...kc])).stdout;
    return { rows: JSON.parse(r.stdout) as ListRow[], requests, table };
  }

  it("costs the same requests for 3 and for 12 clusters, and shows each cluster's own health", async () => {
    await fleet(3);
    const small = await list();
    await fleet(12);
    const large = await list();
    expect(large.rows).to.have.length(12);
    expect(large.requests, "requests whatever the number of clusters").to.equal(small.requests);
    // The control planes are listed once (by vc's managed label), for the clusters the host knows and for their state
    // and health; the plan's own LIST reads the inventory.
    server.resetRequests();
    expect((await vc(["list", "--repo", repo, "-o", "json", ...kc])).code).to.equal(0);
    const controlPlaneLists = server.requests.filter(
      (r) =>
        r.verb === "list" &&
        r.resource === "statefulsets" &&
        decodeURIComponent(r.query).includes("vc.orch.io/managed-by"),
    );
    expect(controlPlaneLists).to.have.length(1);
    // The health each cluster has when read on its own, cluster by cluster.
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath });
    try {
      const desired = await loadDesired(repo, "local");
      for (const c of desired.clusters) {
        const own = await readClusterHealth(client, c.hostNamespace, c.objects);
        const row = large.rows.find((r) => r.name === c.name)!;
        expect({ health: row.health, reason: row.healthReason }, c.name).to.deep.equal({
          health: own.status,
          reason: own.reason,
        });
      }
    } finally {
      client.close();
    }
    const health = new Map(large.rows.map((r) => [r.name, r.health]));
    const names = large.rows.map((r) => r.name);
    expect([health.get(names[0]!), health.get(names[1]!), health.get(names[2]!)]).to.deep.equal([
      "Progressing",
      "Degraded",
      "Degraded",
    ]);
    expect(large.rows[1]!.healthReason).to.equal(`pod ${names[1]}-0 CrashLoopBackOff`);
    expect(large.rows[2]!.healthReason).to.match(/Unschedulable \(.*Insufficient memory/);
    expect(large.table).to.match(new RegExp(`${names[1]}\\s+vc-${names[1]}\\s+.*\\s+Degraded\\n`));
  });

  it(
    "without the right to read the inventory across namespaces, shows each readable cluster's health and says " +
      "drift was not computed",
    async () => {
      await fleet(3);
      const names = Array.from({ length: 3 }, (_, i) => fleetClusterName(i)).sort();
      // A user who may read only the three host namespaces, and not vc's records.
      server.addUser(
        "tenant-reader",
        [{ verbs: ["get", "list"], apiGroups: ["*"], resources: ["*"], namespaces: names.map((n) => `vc-${n}`) }],
        "tenant-reader",
      );
      const kubeconfig = server.writeKubeconfig({ token: "tenant-reader" });
      const r = await vc(["list", "--repo", repo, "-o", "json", "--kubeconfig", kubeconfig]);
      expect(r.code, r.stderr).to.equal(0);
      const rows = JSON.parse(r.stdout) as ListRow[];
      expect(rows.map((row) => row.name)).to.deep.equal(names);
      // The first cluster's own objects say Progressing, but its Namespace (cluster-scoped) is not readable to this
      // user.
      expect(rows.map((row) => row.health)).to.deep.equal(["Unknown", "Degraded", "Degraded"]);
      expect(rows[0]!.healthReason).to.match(new RegExp(`^Namespace vc-${names[0]}: not visible to you`));
      expect(rows[1]!.healthReason).to.equal(`pod ${names[1]}-0 CrashLoopBackOff`);
      for (const row of rows) expect(row.note, row.name).to.match(/drift not computed/);
      expect(rows.every((row) => row.drift === "unknown")).to.equal(true);
    },
  );
});
