// Progressive rollouts on a real API server (issue #22 section 3, "How it is proven"): 30 clusters on a shared base,
// three waves (the canary label, 10 %, the rest). The test stands in for the controllers and the kubelet
// (test/support/kube-status.ts), so each cluster is Healthy or Degraded as its live status says.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { StandInControllers } from "../support/kube-status.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";
import { generateRolloutFleet, liveImage, rewrittenObjects, snapshotClusters, snapshotDifferences, type RolloutFleet } from "./support-rollout.js";

const RECONCILER = "reconciler";

describe("e2e: progressive rollouts over 30 clusters on a real API server", function () {
  this.timeout(600_000);
  const kube = useRealKube({ users: [{ name: RECONCILER, groups: ["system:masters"] }] });
  let fleet: RolloutFleet;
  let hosts: StandInControllers;
  const health = async () => {
    const list = await runVc(["list", "--repo", fleet.dir, "--kubeconfig", kube().kubeconfigPath, "-o", "json"]);
    expect(list.code, list.stderr).to.equal(0);
    return new Map((JSON.parse(list.stdout) as Array<{ name: string; health: string; healthReason?: string }>).map((r) => [r.name, r]));
  };

  before(async () => {
    fleet = generateRolloutFleet({ clusters: 30 });
    hosts = new StandInControllers(kube());
    const applied = await runVc(["apply", fleet.dir, "--target", "kube", "--kubeconfig", kube().kubeconfigFor(RECONCILER)]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(async () => {
    await hosts?.stop();
    fleet?.dispose();
  });

  describe("the harness", () => {
    it("applies 30 clusters; the stand-in controllers make each Healthy, and one Degraded on demand", async () => {
      expect(await liveImage(kube(), fleet.clusters[29]!)).to.match(/:0\.1\.0$/);
      const first = await hosts.settle();
      expect(first.reported).to.have.length(30);
      const healthy = await health();
      expect([...healthy.values()].filter((r) => r.health !== "Healthy"), "clusters not Healthy").to.deep.equal([]);
      // A prod cluster has a metrics-proxy Deployment and a bound claim, both read for its health.
      const claim = await kube().request<KubeObject>("GET", "/api/v1/namespaces/vc-c03/persistentvolumeclaims/data-c03-0");
      expect((claim.body.status as { phase: string }).phase).to.equal("Bound");

      hosts.degrade("vc-c00");
      expect((await hosts.settle()).reported).to.deep.equal(["vc-c00"]);
      const degraded = (await health()).get("c00")!;
      expect(degraded).to.deep.include({ health: "Degraded", healthReason: "pod c00-0 CrashLoopBackOff" });
      hosts.heal("vc-c00");
      await hosts.settle();
      expect((await health()).get("c00")!.health).to.equal("Healthy");
    });

    it("a snapshot is equal byte for byte across a no-op apply, and names what a base change rewrote", async () => {
      const before = await snapshotClusters(kube(), fleet.clusters);
      expect(before.objects.size).to.be.greaterThan(30 * 8);
      const noop = await runVc(["apply", fleet.dir, "--target", "kube", "--kubeconfig", kube().kubeconfigFor(RECONCILER)]);
      expect(noop.code, noop.stdout).to.equal(0);
      await hosts.settle();
      const same = await snapshotClusters(kube(), fleet.clusters);
      expect(snapshotDifferences(before, same)).to.deep.equal([]);
      expect(rewrittenObjects(before, same)).to.deep.equal([]);

      fleet.setBaseTag("0.1.1");
      fleet.commit("base: 0.1.1");
      const one = await runVc(["apply", fleet.dir, "--cluster", "c05", "--target", "kube", "--kubeconfig", kube().kubeconfigFor(RECONCILER)]);
      expect(one.code, one.stdout).to.equal(0);
      const after = await snapshotClusters(kube(), fleet.clusters);
      expect(snapshotDifferences(before, after)).to.deep.equal(["Secret vc-c05/vc-config-c05", "StatefulSet vc-c05/c05"]);
      await hosts.settle();
      expect((await health()).get("c05")!.health).to.equal("Healthy");
      fleet.setBaseTag("0.1.0");
      fleet.commit("base: back to 0.1.0");
      expect((await runVc(["apply", fleet.dir, "--cluster", "c05", "--target", "kube", "--kubeconfig", kube().kubeconfigFor(RECONCILER)])).code).to.equal(0);
      await waitFor(async () => (await liveImage(kube(), fleet.clusters[5]!))?.endsWith(":0.1.0") === true, "c05 back at 0.1.0");
    });
  });
});
