// vc list and vc describe --config-only on a real API server, outside and inside a fleet repository: outside, the
// clusters the host knows (vc's status records and control planes with its managed label) and the configuration a
// control plane runs with (its config Secret); inside, the repository's clusters added, those not applied included.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import type { ListRow } from "../../src/ops/list.js";
import { readClusterHealth } from "../../src/health/read.js";
import { loadDesired } from "../../src/pipeline/load.js";
import { KubeClient } from "../../src/host/client.js";
import { useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

describe("e2e: vc list and vc describe --config-only with and without a repository", function () {
  this.timeout(120_000);
  const kube = useRealKube({ users: [{ name: "viewer" }] });
  let repo: string;
  let elsewhere: string;
  const kc = () => ["--kubeconfig", kube().kubeconfigPath];

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-list-"));
    elsewhere = mkdtempSync(join(tmpdir(), "vc-list-outside-"));
    for (const [name, values] of [
      ["alpha", "controlPlane:\n  statefulSet:\n    probes:\n      livenessProbe:\n        periodSeconds: 30\n"],
      ["beta", "{}\n"],
    ] as const) {
      mkdirSync(join(repo, "clusters", name), { recursive: true });
      writeFileSync(join(repo, "clusters", name, "values.yaml"), values);
    }
    const applied = await runVc(["apply", repo, "--target", "kube", "--cluster", "alpha", ...kc()]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(() => {
    for (const d of [repo, elsewhere]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("outside a repository: the clusters the host knows, with state and revision; no arguments taken", async () => {
    const r = await runVc(["list", "-o", "json", ...kc()], { cwd: elsewhere });
    expect(r.code, r.stderr).to.equal(0);
    const rows = JSON.parse(r.stdout) as ListRow[];
    expect(
      rows.map((x) => `${x.name} ${x.namespace} ${x.source} ${x.controlPlane} ${x.ready} ${x.drift}`),
    ).to.deep.equal(["alpha vc-alpha host pending 0/1 -"]);
    expect(rows[0]!.lastAppliedRevision).to.be.a("string");
    const table = await runVc(["list", ...kc()], { cwd: elsewhere });
    expect(table.stdout).to.match(/^NAME\s+NAMESPACE\s+CONTROL PLANE/);
    // ... RESULT, DRIFT ("-": no repository to compare with), HEALTH (what the reconciler recorded, else Unknown).
    expect(table.stdout).to.match(
      /\nalpha\s+vc-alpha\s+pending\s+0\/1\s+\S+\s+\S+.*\s+applied\s+-\s+(Healthy|Progressing|Degraded|Unknown)\n/,
    );
    const extra = await runVc(["list", "alpha", ...kc()], { cwd: elsewhere });
    expect(extra.code).to.equal(2);
  });

  it("a control plane with vc's managed label but no record is listed too", async () => {
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "gamma", namespace: "default", labels: { "vc.orch.io/managed-by": "gamma" } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "vc", release: "gamma" } },
        serviceName: "gamma",
        template: {
          metadata: { labels: { app: "vc", release: "gamma" } },
          spec: { containers: [{ name: "syncer", image: "vc/syncer:1" }] },
        },
      },
    };
    expect((await kube().request("POST", "/apis/apps/v1/namespaces/default/statefulsets", sts)).status).to.equal(201);
    const rows = JSON.parse((await runVc(["list", "-o", "json", ...kc()], { cwd: elsewhere })).stdout) as ListRow[];
    expect(rows.map((x) => `${x.name} ${x.namespace} ${x.controlPlane}`)).to.deep.equal([
      "alpha vc-alpha pending",
      "gamma default scaled down",
    ]);
  });

  it("inside the repository: its clusters added, the one not applied included, with drift", async () => {
    const r = await runVc(["list", "-o", "json", ...kc()], { cwd: repo });
    expect(r.code, r.stderr).to.equal(0);
    const rows = JSON.parse(r.stdout) as ListRow[];
    expect(rows.map((x) => `${x.name} ${x.source} ${x.controlPlane} ${x.drift}`)).to.deep.equal([
      "alpha both pending no",
      "beta repository absent yes",
      "gamma host scaled down -",
    ]);
  });

  it("inside the repository: the HEALTH column is each cluster's own health, read from the fleet's LISTs", async () => {
    const r = await runVc(["list", "-o", "json", ...kc()], { cwd: repo });
    const rows = JSON.parse(r.stdout) as ListRow[];
    const table = (await runVc(["list", ...kc()], { cwd: repo })).stdout;
    const client = KubeClient.open({ kubeconfig: kube().kubeconfigPath });
    try {
      const desired = await loadDesired(repo, "local");
      expect(desired.clusters.map((c) => c.name)).to.deep.equal(["alpha", "beta"]);
      for (const c of desired.clusters) {
        // What reading the cluster on its own (one GET per object, LISTs of its pods and claims) gives.
        const own = await readClusterHealth(client, c.hostNamespace, c.objects);
        const row = rows.find((x) => x.name === c.name)!;
        expect({ health: row.health, reason: row.healthReason }, c.name).to.deep.equal({
          health: own.status,
          reason: own.reason,
        });
        expect(table, c.name).to.match(new RegExp(`\\n${c.name}\\s+vc-${c.name}\\s+.*\\s${own.status}\\n`));
      }
    } finally {
      client.close();
    }
    expect(rows.find((x) => x.name === "beta")).to.deep.include({
      health: "Unknown",
      healthReason: "not on the host: nothing of the cluster is applied",
    });
  });

  it("a user who may not list across namespaces is told so, not failed", async () => {
    const r = await runVc(["list", "-o", "json", "--kubeconfig", kube().kubeconfigFor("viewer")], { cwd: elsewhere });
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal([]);
    expect(r.stderr).to.equal(
      "note: vc's records of the clusters are not visible to you\nnote: control planes across namespaces are not " +
        "visible to you\n",
    );
  });

  it("describe --config-only outside a repository reads the control plane's config Secret on the host", async () => {
    const r = await runVc(["describe", "alpha", "--config-only", ...kc()], { cwd: elsewhere });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain("from Secret vc-alpha/vc-config-alpha");
    const values = load(r.stdout) as {
      controlPlane: { statefulSet: { probes: { livenessProbe: { periodSeconds: number } } } };
    };
    expect(values.controlPlane.statefulSet.probes.livenessProbe.periodSeconds).to.equal(30);
    const unknown = await runVc(["describe", "beta", "--config-only", ...kc()], { cwd: elsewhere });
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain("no config Secret vc-config-beta in namespace vc-beta");
  });
});
