// On a real API server: a persistence.size change is refused before any write of the cluster, and recreated with
// --force (orphan delete: pods and claims kept; claims expanded where the storage class allows).
import { expect } from "chai";
import { rmSync } from "node:fs";
import { useRealKube, type RealKube } from "../support/real-kube.js";
import { editRepo, exampleRepo, garbageCollector, getJson, kubectl, totals, vcOn } from "./plan-support.js";

describe("e2e: unappliable changes on a real API server", function () {
  this.timeout(180_000);
  const kube = useRealKube();
  let host: RealKube;
  let repo: string;

  before(async () => {
    host = kube();
    repo = exampleRepo(["minimal", "platform"]);
    const first = await vcOn(host, "apply", repo);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    // No controllers run here: the claims and the pod the StatefulSet controller would have made are created directly,
    // the claims bound (status) as a provisioner would. data-platform-0 uses an expandable class, data-platform-1 not.
    const objects = [
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name: "standard" },
        provisioner: "example.com/none",
        allowVolumeExpansion: true,
      },
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name: "fixed" },
        provisioner: "example.com/none",
      },
      claim("data-platform-0", "standard"),
      claim("data-platform-1", "fixed"),
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "platform-0", namespace: "vc-platform", labels: { app: "vc", release: "platform" } },
        spec: { containers: [{ name: "syncer", image: "busybox:1" }] },
      },
    ];
    await kubectl(host, ["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
    for (const name of ["data-platform-0", "data-platform-1"]) {
      await kubectl(host, [
        "-n",
        "vc-platform",
        "patch",
        "pvc",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Bound","capacity":{"storage":"10Gi"}}}',
      ]);
    }
  });
  after(async () => {
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  function claim(name: string, storageClassName: string) {
    return {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace: "vc-platform", labels: { app: "vc", release: "platform" } },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName, resources: { requests: { storage: "10Gi" } } },
    };
  }

  it(
    "persistence.size: the plan names the immutable field before any write; nothing of the cluster is applied, " +
      "other clusters are",
    async () => {
      editRepo(repo, "clusters/platform/values.yaml", "size: 10Gi", "size: 20Gi");
      editRepo(repo, "clusters/minimal/values.yaml", "cpu: 200m", "cpu: 300m");
      const secretBefore = await getJson(host, ["-n", "vc-platform", "secret", "vc-config-platform"]);
      const stsBefore = await getJson(host, ["-n", "vc-platform", "statefulset", "platform"]);

      const diff = await vcOn(host, "diff", repo, "--cluster", "platform");
      expect(diff.stdout).to.include(
        "~ update StatefulSet vc-platform/platform (refused in place: immutable spec.volumeClaimTemplates; needs " +
          "--force)",
      );

      const apply = await vcOn(host, "apply", repo);
      expect(apply.code).to.equal(1);
      expect(apply.stdout).to.include(
        "! cannot update in place: the API server refuses changes of immutable fields of StatefulSet " +
          "vc-platform/platform (spec.volumeClaimTemplates)",
      );
      expect(apply.stdout).to.match(
        /cluster platform: 0 created, 0 updated, 0 deleted, \d+ unchanged, 0 failed, 2 skipped/,
      );
      expect(apply.stdout).to.include("updated StatefulSet vc-minimal/minimal").and.not.include("422");
      expect(
        (await getJson(host, ["-n", "vc-platform", "secret", "vc-config-platform"])).metadata.resourceVersion,
        "the config Secret was not half-applied",
      ).to.equal(secretBefore.metadata.resourceVersion);
      expect((await getJson(host, ["-n", "vc-platform", "statefulset", "platform"])).metadata.resourceVersion).to.equal(
        stsBefore.metadata.resourceVersion,
      );
    },
  );

  it(
    "--force orphan-deletes and recreates the StatefulSet: pod and claims kept, the expandable claim grown, the " +
      "other explained",
    async () => {
      const before = await getJson(host, ["-n", "vc-platform", "statefulset", "platform"]);
      const pvcs = await getJson(host, ["-n", "vc-platform", "pvc"]);
      const pod = await getJson(host, ["-n", "vc-platform", "pod", "platform-0"]);
      const gc = garbageCollector(host, "vc-platform", "platform");
      let apply;
      try {
        apply = await vcOn(host, "apply", repo, "--cluster", "platform", "--force");
      } finally {
        await gc.stop();
      }
      expect(gc.finalizers, "deleted with propagationPolicy=Orphan").to.include("orphan");
      expect(apply.code, apply.stdout + apply.stderr).to.equal(0);
      expect(apply.stdout).to.include(
        "updated StatefulSet vc-platform/platform: recreated (immutable spec.volumeClaimTemplates); deleted with " +
          "propagationPolicy=Orphan (its pods and volume claims stay) and created anew",
      );
      expect(apply.stdout).to.include("claim data-platform-0 expanded from 10Gi to 20Gi");
      expect(apply.stdout).to.include(
        "claim data-platform-1 stays 10Gi: storage class fixed does not allow volume expansion",
      );
      expect(totals(apply.stdout).slice(0, 5)).to.deep.equal([0, 2, 0, totals(apply.stdout)[3], 0]);

      const after = await getJson(host, ["-n", "vc-platform", "statefulset", "platform"]);
      expect(after.metadata.uid).to.not.equal(before.metadata.uid);
      expect(after.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.equal("20Gi");
      const pvcsAfter = await getJson(host, ["-n", "vc-platform", "pvc"]);
      expect(pvcsAfter.items.map((p: any) => p.metadata.uid).sort()).to.deep.equal(
        pvcs.items.map((p: any) => p.metadata.uid).sort(),
      );
      expect(pvcsAfter.items.map((p: any) => [p.metadata.name, p.spec.resources.requests.storage])).to.deep.equal([
        ["data-platform-0", "20Gi"],
        ["data-platform-1", "10Gi"],
      ]);
      expect((await getJson(host, ["-n", "vc-platform", "pod", "platform-0"])).metadata.uid).to.equal(pod.metadata.uid);
      const diff = await vcOn(host, "diff", repo, "--exit-code");
      expect(diff.code, diff.stdout).to.equal(0);
    },
  );
});
