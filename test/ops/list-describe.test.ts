// vc list and vc describe against the API test server, with a repository applied by vc apply.
import { editRecord } from "../support/records.js";
import { expect } from "chai";
import { controlledBy } from "../support/owner.js";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { load } from "js-yaml";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { tempDir, vc } from "./helpers.js";
import type { ListRow } from "../../src/ops/list.js";
import { describeCluster, type Description } from "../../src/ops/describe.js";
import { openHost } from "../../src/ops/host.js";
import { KubeClient } from "../../src/host/client.js";
import { effectiveValues } from "../../src/validate/values.js";

const EXAMPLES = resolve(import.meta.dirname, "../../clusters");
const DB_PASSWORD = "s3cr3t-db-pw";

describe("ops: vc list and vc describe", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let repo: string;
  let kc: string[];

  before(async () => {
    server = await startKubeServer();
    kc = ["--kubeconfig", server.kubeconfigPath];
    repo = tempDir();
    cpSync(join(EXAMPLES, "minimal"), join(repo, "clusters/team-a"), { recursive: true });
    mkdirSync(join(repo, "clusters/team-b"), { recursive: true });
    writeFileSync(
      join(repo, "clusters/team-b/values.yaml"),
      `controlPlane:\n  backingStore:\n    database:\n      external:\n        enabled: true\n        endpoint: ` +
        `"postgres://vc:${DB_PASSWORD}@db:5432/vc"\n`,
    );
    writeFileSync(join(repo, "clusters/team-b/cluster.yaml"), "namespace: tenants-b\n");
    mkdirSync(join(repo, "clusters/broken"), { recursive: true });
    writeFileSync(join(repo, "clusters/broken/values.yaml"), "controlPlane:\n  statefulSet:\n    replicas: many\n");
    const applied = await vc(["apply", repo, "--target", "kube", "--cluster", "team-a", ...kc]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(async () => server?.close());

  const list = async () => {
    const r = await vc(["list", "--repo", repo, "-o", "json", ...kc]);
    expect(r.code, r.stderr).to.equal(0);
    return new Map((JSON.parse(r.stdout) as ListRow[]).map((row) => [row.name, row]));
  };

  it("lists every folder with namespace, control-plane state and drift", async () => {
    const rows = await list();
    expect([...rows.keys()]).to.deep.equal(["broken", "team-a", "team-b"]);
    expect(rows.get("team-a")).to.deep.include({
      namespace: "vc-team-a",
      controlPlane: "pending",
      ready: "0/1",
      drift: "no",
    });
    expect(rows.get("team-b")).to.deep.include({ namespace: "tenants-b", controlPlane: "absent", drift: "yes" });
    expect(rows.get("broken")).to.deep.include({ namespace: "vc-broken", drift: "invalid" });
    // No controller has reported the StatefulSet; team-b has nothing on the host; broken cannot be rendered.
    expect(rows.get("team-a")).to.deep.include({
      health: "Progressing",
      healthReason: "StatefulSet vc-team-a/team-a: not yet observed by its controller",
    });
    expect(rows.get("team-b")).to.deep.include({ health: "Unknown" });
    expect(rows.get("broken")).to.deep.include({ health: "Unknown" });
  });

  it(
    "shows health from statuses written through the status subresource: Healthy, then Degraded naming " + "the pod",
    async () => {
      const client = KubeClient.open({ kubeconfig: server.kubeconfigPath });
      const setStatus = async (path: string, status: unknown) => {
        const live = await client.request<Record<string, unknown>>("GET", path);
        await client.request("PUT", `${path}/status`, { body: { ...live, status } });
      };
      await setStatus("/apis/apps/v1/namespaces/vc-team-a/statefulsets/team-a", {
        observedGeneration: 1,
        replicas: 1,
        readyReplicas: 1,
        currentReplicas: 1,
        updatedReplicas: 1,
        currentRevision: "team-a-1",
        updateRevision: "team-a-1",
      });
      await client.request("POST", "/api/v1/namespaces/vc-team-a/pods", {
        body: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            name: "team-a-0",
            labels: { release: "team-a", app: "vc", "controller-revision-hash": "team-a-1" },
            ownerReferences: [await controlledBy(client, "vc-team-a", "team-a")],
          },
          spec: { containers: [{ name: "syncer", image: "x" }] },
        },
      });
      await setStatus("/api/v1/namespaces/vc-team-a/pods/team-a-0", {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True" }],
      });
      expect((await list()).get("team-a")).to.deep.include({ health: "Healthy" });
      await setStatus("/api/v1/namespaces/vc-team-a/pods/team-a-0", {
        phase: "Running",
        conditions: [{ type: "Ready", status: "False" }],
        containerStatuses: [{ name: "syncer", restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } } }],
      });
      expect((await list()).get("team-a")).to.deep.include({
        health: "Degraded",
        healthReason: "pod team-a-0 CrashLoopBackOff",
      });
      const table = await vc(["list", "--repo", repo, ...kc]);
      expect(table.stdout).to.match(/team-a\s+vc-team-a\s+.*\s+Degraded\n/);
      expect(table.stdout).to.include("team-a: Degraded: pod team-a-0 CrashLoopBackOff");
      const d = JSON.parse(
        (await vc(["describe", "team-a", "--repo", repo, "-o", "json", ...kc])).stdout,
      ) as Description;
      expect(d.health).to.deep.include({ status: "Degraded", reason: "pod team-a-0 CrashLoopBackOff" });
      const text = await vc(["describe", "team-a", "--repo", repo, ...kc]);
      expect(text.stdout).to.include("Health:          Degraded: pod team-a-0 CrashLoopBackOff");
    },
  );

  it(
    "follows the host: ready pods, scaled down, restoring, drift after a live edit, the last applied " + "revision",
    async () => {
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "team-a-0", namespace: "vc-team-a", labels: { release: "team-a", app: "vc" } },
        spec: { containers: [{ name: "syncer", image: "x" }] },
        status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
      });
      // As the reconciler records a run: no vc apply user.
      editRecord(server, "team-a", {
        lastAppliedRevision: "0123456789abcdef",
        result: "applied",
        history: "[]",
        lastAppliedBy: undefined,
        lastAppliedVia: undefined,
      });
      let row = (await list()).get("team-a")!;
      expect(row).to.deep.include({
        controlPlane: "running",
        ready: "1/1",
        lastAppliedRevision: "0123456789abcdef",
        result: "applied",
        drift: "no",
      });

      const sts = server.get("apps/v1", "StatefulSet", "vc-team-a", "team-a")!;
      server.put({ ...sts, spec: { ...(sts.spec as object), replicas: 0 } });
      row = (await list()).get("team-a")!;
      expect(row).to.deep.include({ controlPlane: "scaled down", drift: "yes" });

      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "team-a-restore",
          namespace: "vc-team-a",
          labels: { app: "vc-restore", "vc.orch.io/managed-by": "team-a" },
        },
        spec: { containers: [{ name: "restore", image: "x" }] },
        status: { phase: "Running" },
      });
      expect((await list()).get("team-a")!.controlPlane).to.equal("restoring");

      const table = await vc(["list", "--repo", repo, ...kc]);
      expect(table.stdout.split("\n")[0]).to.match(
        /^NAME\s+NAMESPACE\s+CONTROL PLANE\s+READY\s+LAST APPLIED\s+APPLIED BY\s+RESULT\s+DRIFT\s+HEALTH$/,
      );
      expect(table.stdout).to.match(
        /team-a\s+vc-team-a\s+restoring\s+1\/0\s+0123456789ab\s+reconciler\s+applied\s+yes/,
      );
      expect(table.stdout).to.match(/\nbroken: /);
    },
  );

  it("describe --config-only prints the effective values with the database endpoint masked", async () => {
    const r = await vc(["describe", "team-b", "--config-only", "--repo", repo]);
    expect(r.code, r.stderr).to.equal(0);
    const values = load(r.stdout) as {
      controlPlane: {
        backingStore: { database: { external: { endpoint: string } } };
        statefulSet: { probes: { livenessProbe: { periodSeconds: number } } };
      };
    };
    expect(values.controlPlane.backingStore.database.external.endpoint).to.equal("<masked>");
    expect(values.controlPlane.statefulSet.probes.livenessProbe.periodSeconds).to.be.a("number");
    expect(r.stdout).not.to.contain(DB_PASSWORD);
    const missing = await vc(["describe", "nope", "--config-only", "--repo", repo, ...kc]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain("no folder clusters/nope");
    const nowhere = await vc(["describe", "nope", "--config-only", ...kc], { cwd: tempDir() });
    expect(nowhere.code).to.equal(1);
    expect(nowhere.stderr).to.contain("no config Secret vc-config-nope in namespace vc-nope");
  });

  it(
    "describe --config-only outside a repository reads the configuration the control plane runs with from " +
      "the host",
    async () => {
      const elsewhere = tempDir();
      const r = await vc(["describe", "team-a", "--config-only", "-o", "json", ...kc], { cwd: elsewhere });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.equal(
        'note: no folder clusters/team-a here: the configuration the control plane runs with, from Secret vc-team-a/vc-config-team-a on context "test"\n',
      );
      const values = JSON.parse(r.stdout) as {
        controlPlane: { statefulSet: { probes: { livenessProbe: { periodSeconds: number } } } };
      };
      expect(values.controlPlane.statefulSet.probes.livenessProbe.periodSeconds).to.be.a("number");
    },
  );

  it("vc list outside a repository lists the clusters the host knows; inside, the repository's too", async () => {
    const elsewhere = tempDir();
    const outside = await vc(["list", "-o", "json", ...kc], { cwd: elsewhere });
    expect(outside.code, outside.stderr).to.equal(0);
    const rows = JSON.parse(outside.stdout) as ListRow[];
    expect(rows.map((r) => `${r.name} ${r.namespace} ${r.source} ${r.drift}`)).to.deep.equal([
      "team-a vc-team-a host -",
    ]);
    const inside = await vc(["list", "-o", "json", ...kc], { cwd: repo });
    expect((JSON.parse(inside.stdout) as ListRow[]).map((r) => `${r.name} ${r.source}`)).to.deep.equal([
      "broken repository",
      "team-a both",
      "team-b repository",
    ]);
  });

  it(
    "describe shows namespace, images, state, revisions, mesh objects with host names and the metrics API " + "service",
    async () => {
      server.put({
        apiVersion: "networking.mesh.io/v1beta1",
        kind: "VirtualService",
        metadata: {
          name: "reviews-x-default-x-team-a",
          namespace: "vc-team-a",
          labels: { "vc.orch.io/managed-by": "team-a" },
          annotations: {
            "vc.orch.io/object-name": "reviews",
            "vc.orch.io/object-namespace": "default",
            "vc.orch.io/source-file": "clusters/team-a/mesh/reviews.yaml",
          },
        },
        spec: { hosts: ["reviews"] },
      });
      server.put({
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: "v1beta1.metrics.orch.io" },
        spec: { group: "metrics.orch.io", version: "v1beta1" },
        status: { conditions: [{ type: "Available", status: "False", reason: "MissingEndpoints" }] },
      });
      const r = await vc(["describe", "team-a", "--repo", repo, "-o", "json", ...kc]);
      expect(r.code, r.stderr).to.equal(0);
      const d = JSON.parse(r.stdout) as Description;
      expect(d).to.deep.include({ cluster: "team-a", namespace: "vc-team-a", hostContext: "test" });
      expect(d.images.length).to.be.greaterThan(0);
      expect(d.controlPlane.state).to.equal("restoring");
      expect(d.reconcile.lastAppliedRevision).to.equal("0123456789abcdef");
      expect(d.mesh).to.deep.equal([
        {
          kind: "VirtualService",
          hostName: "reviews-x-default-x-team-a",
          virtualName: "reviews",
          virtualNamespace: "default",
          sourceFile: "clusters/team-a/mesh/reviews.yaml",
        },
      ]);
      expect(d.metricsApi).to.deep.equal({
        service: "v1beta1.metrics.orch.io",
        state: "unavailable (MissingEndpoints)",
      });
      expect(d.config).to.be.an("object");
      const text = await vc(["describe", "team-a", "--repo", repo, ...kc]);
      expect(text.stdout)
        .to.contain("Control plane:   restoring")
        .and.contain("VirtualService reviews-x-default-x-team-a <- default/reviews")
        .and.contain("Metrics API:     v1beta1.metrics.orch.io unavailable (MissingEndpoints)");
    },
  );

  it("describe reads the APIService of the host metrics group the cluster is configured with", async () => {
    server.put({
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: { group: "metrics.k8s.io", version: "v1beta1" },
      status: { conditions: [{ type: "Available", status: "True" }] },
    });
    const values = effectiveValues({
      integrations: { metricsServer: { enabled: true, proxy: { hostApiGroup: "metrics.k8s.io" } } },
    });
    const host = openHost({ kubeconfig: server.kubeconfigPath });
    try {
      const d = await describeCluster(host, { cluster: "team-a", namespace: "vc-team-a", values });
      expect(d.metricsApi).to.deep.equal({ service: "v1beta1.metrics.k8s.io", state: "available" });
    } finally {
      host.close();
    }
  });
});
