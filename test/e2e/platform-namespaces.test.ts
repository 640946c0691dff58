// Issue #38 case 4 on a real API server: platform namespaces a tenant cannot occupy. Source A's folder names source
// B's records namespace before B made it; A applies it as its cluster's host namespace, and A's tenant (the syncer's
// TokenRequest token) plants a record and a Lease there. B keeps no records there, reads none of the planted ones, and
// never leads from that namespace; once B's platform namespace exists, a folder naming it is refused, even taken over.
import { expect } from "chai";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient } from "../../src/host/client.js";
import type { KubeObject } from "../../src/kube/object.js";
import { silentLogger } from "../../src/model/log.js";
import { LeaderElector } from "../../src/reconciler/leader.js";
import { recordBase } from "../../src/records/record.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

describe("e2e: platform namespaces a tenant cannot occupy (#38.4)", function () {
  this.timeout(300_000);
  const kube = useRealKube();
  let repoA: string;
  let repoB: string;
  const host = () => ["--target", "kube", "--kubeconfig", kube().kubeconfigPath];

  before(async () => {
    await installExampleCrds(kube());
    // A: a folder naming rec-b, source B's records namespace that B has not made yet.
    repoA = exampleRepo(["minimal"]);
    mkdirSync(join(repoA, "clusters", "grab"), { recursive: true });
    writeFileSync(join(repoA, "clusters", "grab", "values.yaml"), "{}\n");
    writeFileSync(join(repoA, "clusters", "grab", "cluster.yaml"), "namespace: rec-b\n");
    repoB = exampleRepo(["platform"]);
  });
  after(() => {
    for (const r of [repoA, repoB]) if (r) rmSync(r, { recursive: true, force: true });
  });

  it("B keeps no records, reads none, never leads where A's cluster lives; A's tenant sees none of B's", async () => {
    const a = await runVc(["apply", repoA, ...host(), "--owner", "team-a", "--records-namespace", "rec-a"]);
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    // A's tenant: the syncer of cluster grab, with the Role vc rendered for it in rec-b.
    const tenant = KubeClient.open({
      kubeconfig: await kube().serviceAccountKubeconfig("rec-b", "vc-grab"),
      retry: { attempts: 1 },
    });
    try {
      // It plants a record of B's cluster suspending it, and the Lease B's replicas would elect with.
      const planted = recordBase("rec-b", "team-b", "platform", "vc-platform");
      planted.metadata.annotations = { "vc.orch.io/suspended-by": "tenant grab" };
      await tenant.request("POST", "/api/v1/namespaces/rec-b/configmaps", { body: planted });
      await tenant.request("POST", "/apis/coordination.k8s.io/v1/namespaces/rec-b/leases", {
        body: {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: "vc-reconciler", namespace: "rec-b" },
          spec: { holderIdentity: "tenant", leaseDurationSeconds: 3600 },
        },
      });

      const b = await runVc(["apply", repoB, ...host(), "--owner", "team-b", "--records-namespace", "rec-b"]);
      expect(b.code, b.stdout + b.stderr).to.equal(2);
      expect(b.stdout + b.stderr).to.match(/host namespace of cluster grab/);
      const status = await runVc(["status", ...host(), "--records-namespace", "rec-b", "-o", "json"]);
      expect(status.code).to.equal(2);
      expect(status.stdout).to.not.include("tenant grab");

      const errors: string[] = [];
      const elector = new LeaderElector({
        client: KubeClient.open({ kubeconfig: kube().kubeconfigPath }),
        namespace: "rec-b",
        identity: "replica-b",
        logger: { ...silentLogger, error: (_m, f) => errors.push(String(f?.error)) },
      });
      expect(await elector.tick()).to.equal(false);
      expect(errors.join("\n")).to.match(/host namespace of cluster grab/);

      // Read as A's tenant: nothing B wrote is there, no platform object of B's (the suspension stays the tenant's).
      const cms = await tenant.request<{ items: KubeObject[] }>("GET", "/api/v1/namespaces/rec-b/configmaps");
      const writers = cms.items.flatMap((o) =>
        ((o.metadata.managedFields as Array<{ manager?: string }> | undefined) ?? []).map((m) => m.manager),
      );
      expect(writers.filter((m) => m?.startsWith("vc"))).to.deep.equal([]);
      const lease = await tenant.request<KubeObject & { spec: { holderIdentity: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/rec-b/leases/vc-reconciler",
      );
      expect(lease.spec.holderIdentity).to.equal("tenant");
    } finally {
      tenant.close();
    }
  });

  it("once B made its records namespace (marked), a folder naming it is refused, even taken over", async () => {
    const b = await runVc(["apply", repoB, ...host(), "--owner", "team-b", "--records-namespace", "rec-c"]);
    expect(b.code, b.stdout + b.stderr).to.equal(0);
    const ns = await kube().request<KubeObject>("GET", "/api/v1/namespaces/rec-c");
    expect(ns.body.metadata.labels?.["vc.orch.io/platform-namespace"]).to.equal("true");
    writeFileSync(join(repoA, "clusters", "grab", "cluster.yaml"), "namespace: rec-c\n");
    const refused = await runVc(["apply", repoA, ...host(), "--owner", "team-a", "--records-namespace", "rec-a"]);
    expect(refused.code, refused.stdout).to.equal(1);
    expect(refused.stdout + refused.stderr).to.match(/Namespace rec-c/);
    const taken = await runVc([
      "adopt",
      "grab",
      repoA,
      ...host(),
      "--owner",
      "team-a",
      "--records-namespace",
      "rec-a",
      "--take-ownership",
      "Namespace/rec-c",
    ]);
    expect(taken.code, taken.stdout + taken.stderr).to.not.equal(0);
    const after = await kube().request<KubeObject>("GET", "/api/v1/namespaces/rec-c");
    expect(after.body.metadata.labels?.["vc.orch.io/inventory"]).to.equal(undefined);
    const roles = await kube().request<{ items: KubeObject[] }>(
      "GET",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/rec-c/roles",
    );
    expect(roles.body.items).to.deep.equal([]);
  });
});
