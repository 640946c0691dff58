// The reconciler's own identity (deploy/reconciler/rbac.yaml, a real ServiceAccount token) on a real API server, which
// enforces RBAC escalation prevention: it must be able to create every Role and ClusterRole vc renders, whatever
// custom resources a cluster syncs and whichever host metrics group its proxy reads.
import { expect } from "chai";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";
import type { KubeObject } from "../../src/kube/object.js";
import { readClusterHealth } from "../../src/health/read.js";
import { KubeClient } from "../../src/target/kube/client.js";

const ROOT = join(import.meta.dirname, "..", "..");

const EXTRA_VALUES = `sync:
  toHost:
    customResources:
      widgets.example.com:
        enabled: true
      backups.velero.io:
        enabled: true
integrations:
  metricsServer:
    enabled: true
    pods: true
    nodes: true
    proxy:
      hostApiGroup: metrics.k8s.io
`;

describe("e2e: the reconciler's RBAC on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-e2e-rbac-"));
    cpSync(join(ROOT, "clusters"), join(repo, "clusters"), { recursive: true });
    mkdirSync(join(repo, "clusters", "extras"));
    writeFileSync(join(repo, "clusters", "extras", "values.yaml"), EXTRA_VALUES);
    await installExampleCrds(kube());
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("as its ServiceAccount, applies every cluster, creating every Role, ClusterRole and binding vc renders", async () => {
    const kubeconfig = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    const res = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    const writer = "system:serviceaccount:vc-system:vc-reconciler";
    const refused = kube().writes(writer).filter((w) => w.code >= 400);
    expect(refused, JSON.stringify(refused)).to.deep.equal([]);
    const roles = kube().writes(writer).filter((w) => w.resource === "roles" || w.resource === "clusterroles");
    expect(roles.length).to.be.greaterThan(3);
    const extras = await kube().kubectl(["-n", "vc-extras", "get", "roles", "-o", "json"]);
    const rules = JSON.stringify(JSON.parse(extras.stdout).items.map((r: { rules: unknown }) => r.rules));
    expect(rules).to.include("widgets").and.include("velero.io");
  });

  it("as its ServiceAccount, reads each cluster's health (pods, claims, events) but may write no pod", async () => {
    const kubeconfig = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    const rendered = JSON.parse((await runVc(["render", repo, "--cluster", "minimal", "-o", "json"])).stdout) as { items: KubeObject[] };
    const h = await readClusterHealth(KubeClient.open({ kubeconfig }), "vc-minimal", rendered.items);
    // No controller runs here: the StatefulSet is not yet reported, and nothing was forbidden.
    expect(h.status, JSON.stringify(h)).to.equal("Progressing");
    expect(JSON.stringify(h)).not.to.include("forbidden");
    const as = "system:serviceaccount:vc-system:vc-reconciler";
    const canCreatePods = await kube().kubectl(["auth", "can-i", "create", "pods", "-n", "vc-minimal", "--as", as]);
    expect(canCreatePods.stdout.trim()).to.equal("no");
    const canPatchStatus = await kube().kubectl(["auth", "can-i", "patch", "pods/status", "-n", "vc-minimal", "--as", as]);
    expect(canPatchStatus.stdout.trim()).to.equal("no");
  });
});
