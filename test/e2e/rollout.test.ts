// Progressive rollouts on a real API server (issue #22 section 3, "How it is proven"): 30 clusters on a shared base,
// three waves (the canary label, 10 %, the rest). The test stands in for the controllers and the kubelet
// (test/support/kube-status.ts), so each cluster is Healthy or Degraded as its live status says.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { StandInControllers } from "../support/kube-status.js";
import { kubectl } from "../support/kubectl.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";
import { ANNOTATIONS } from "../../src/translate/keys.js";
import {
  generateRolloutFleet,
  liveImage,
  rewrittenObjects,
  snapshotClusters,
  snapshotDifferences,
  startReconciler,
  THREE_WAVES,
  type ClusterSnapshot,
  type FleetCluster,
  type ReconcilerProcess,
  type RolloutFleet,
} from "./support-rollout.js";

const RECONCILER = "reconciler";
const RECORDS = "vc-system";

/** `vc rollout status -o json` as the test reads it. */
interface RolloutStatus {
  id: string;
  phase: string;
  message: string;
  wave: { index: number; name: string; of: number } | null;
  waves: Array<{
    name: string;
    state: string;
    count: number;
    moved: number;
    healthy: number;
    clusters: Array<{ name: string; base: "to" | "from"; health: string | null; reason?: string }>;
  }>;
}

describe("e2e: progressive rollouts over 30 clusters on a real API server", function () {
  this.timeout(600_000);
  const kube = useRealKube({ users: [{ name: RECONCILER, groups: ["system:masters"] }] });
  let fleet: RolloutFleet;
  let hosts: StandInControllers;
  const health = async () => {
    const list = await runVc(["list", "--repo", fleet.dir, "--kubeconfig", kube().kubeconfigPath, "-o", "json"]);
    expect(list.code, list.stderr).to.equal(0);
    return new Map(
      (JSON.parse(list.stdout) as Array<{ name: string; health: string; healthReason?: string }>).map((r) => [
        r.name,
        r,
      ]),
    );
  };

  before(async () => {
    fleet = generateRolloutFleet({ clusters: 30 });
    hosts = new StandInControllers(kube());
    const applied = await runVc([
      "apply",
      fleet.dir,
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigFor(RECONCILER),
    ]);
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
      expect(
        [...healthy.values()].filter((r) => r.health !== "Healthy"),
        "clusters not Healthy",
      ).to.deep.equal([]);
      // A prod cluster has a metrics-proxy Deployment and a bound claim, both read for its health.
      const claim = await kube().request<KubeObject>(
        "GET",
        "/api/v1/namespaces/vc-c03/persistentvolumeclaims/data-c03-0",
      );
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
      const noop = await runVc([
        "apply",
        fleet.dir,
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigFor(RECONCILER),
      ]);
      expect(noop.code, noop.stdout).to.equal(0);
      await hosts.settle();
      const same = await snapshotClusters(kube(), fleet.clusters);
      expect(snapshotDifferences(before, same)).to.deep.equal([]);
      expect(rewrittenObjects(before, same)).to.deep.equal([]);

      fleet.setBaseTag("0.1.1");
      fleet.commit("base: 0.1.1");
      const one = await runVc([
        "apply",
        fleet.dir,
        "--cluster",
        "c05",
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigFor(RECONCILER),
      ]);
      expect(one.code, one.stdout).to.equal(0);
      const after = await snapshotClusters(kube(), fleet.clusters);
      expect(snapshotDifferences(before, after)).to.deep.equal([
        "Secret vc-c05/vc-config-c05",
        "StatefulSet vc-c05/c05",
      ]);
      await hosts.settle();
      expect((await health()).get("c05")!.health).to.equal("Healthy");
      fleet.setBaseTag("0.1.0");
      fleet.commit("base: back to 0.1.0");
      expect(
        (
          await runVc([
            "apply",
            fleet.dir,
            "--cluster",
            "c05",
            "--target",
            "kube",
            "--kubeconfig",
            kube().kubeconfigFor(RECONCILER),
          ])
        ).code,
      ).to.equal(0);
      await waitFor(
        async () => (await liveImage(kube(), fleet.clusters[5]!))?.endsWith(":0.1.0") === true,
        "c05 back at 0.1.0",
      );
    });
  });

  describe("a three-wave rollout of a base change, driven by the reconciler process", () => {
    let reconciler: ReconcilerProcess;
    let waves: { canary: FleetCluster[]; early: FleetCluster[]; rest: FleetCluster[] };
    let atOld: ClusterSnapshot;
    const byName = (names: string[]) => names.map((n) => fleet.clusters.find((c) => c.name === n)!);
    const rollout = async (...args: string[]) =>
      runVc(["rollout", ...args, "--repo", fleet.dir, "--kubeconfig", kube().kubeconfigPath]);
    const status = async (): Promise<RolloutStatus | undefined> => {
      const res = await rollout("status", "-o", "json");
      if (res.code === 1) return undefined;
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      return JSON.parse(res.stdout) as RolloutStatus;
    };
    const waitPhase = async (phase: string, wave: number, what: string) => {
      let last: RolloutStatus | undefined;
      await waitFor(
        async () => {
          last = await status();
          return last?.phase === phase && last.wave?.index === wave;
        },
        `${what} (last: ` +
          `${JSON.stringify(last && { phase: last.phase, wave: last.wave, message: last.message })}):\n${reconciler.log().slice(-3000)}`,
        180_000,
      );
      return last!;
    };
    /**
     * Writes the reconciler made since `mark` to the objects of `clusters` (their namespaces and cluster-scoped RBAC).
     */
    const writesTo = (mark: number, clusters: readonly FleetCluster[]) => {
      const ns = new Set(clusters.map((c) => c.hostNamespace));
      return kube()
        .writes(RECONCILER)
        .slice(mark)
        .filter(
          (w) =>
            (w.namespace !== undefined && ns.has(w.namespace)) ||
            (w.resource === "namespaces" && ns.has(w.name ?? "")) ||
            [...ns].some((n) => w.name?.endsWith(`-x-${n}`)),
        );
    };
    const imageTags = async (clusters: readonly FleetCluster[]) =>
      new Set(await Promise.all(clusters.map(async (c) => (await liveImage(kube(), c))?.replace(/^.*:/, ""))));

    before(async () => {
      await hosts.settle();
      hosts.start(300);
      fleet.write("fleet/rollout.yaml", THREE_WAVES);
      fleet.commit("fleet: roll base changes out in three waves");
      reconciler = startReconciler(fleet.dir, kube().kubeconfigFor(RECONCILER), ["--interval", "1s"]);
    });
    after(async () => {
      await reconciler?.stop();
      await hosts.stop();
    });

    it(
      "the first pass that sees fleet/rollout.yaml pins every cluster at its base, writing none of their " + "objects",
      async () => {
        const before = await snapshotClusters(kube(), fleet.clusters);
        const mark = kube().writes(RECONCILER).length;
        await waitFor(
          async () => {
            const records = await kube().request<{ items: KubeObject[] }>(
              "GET",
              `/api/v1/namespaces/${RECORDS}/configmaps?labelSelector=${encodeURIComponent("vc.orch.io/record=record")}`,
            );
            return (
              records.body.items.length === 30 &&
              records.body.items.every((r) =>
                /^[0-9a-f]{64}$/.test((r as { data?: Record<string, string> }).data?.base ?? ""),
              )
            );
          },
          `every record to carry its base:\n${reconciler.log().slice(-3000)}`,
          120_000,
        );
        const after = await snapshotClusters(kube(), fleet.clusters);
        expect(snapshotDifferences(before, after)).to.deep.equal([]);
        expect(writesTo(mark, fleet.clusters)).to.deep.equal([]);
        // It records a rollout with no member (no cluster's base layers change): nothing moves.
        const none = (await status())!;
        expect(none.phase).to.equal("Completed");
        expect(none.waves.map((w) => w.count)).to.deep.equal([0, 0, 0]);
      },
    );

    it(
      "a degraded canary halts the rollout: every later-wave cluster byte for byte at its old revision, none " +
        "written",
      async () => {
        atOld = await snapshotClusters(kube(), fleet.clusters);
        const mark = kube().writes(RECONCILER).length;
        hosts.degrade("vc-c00");
        fleet.setBaseTag("0.2.0");
        fleet.commit("base: control plane 0.2.0");
        const halted = await waitPhase("Halted", 0, "the canary wave to halt");
        expect(halted.waves.map((w) => w.name)).to.deep.equal(["canary", "early", "rest"]);
        expect(halted.waves.map((w) => w.clusters.length)).to.deep.equal([1, 2, 27]);
        waves = {
          canary: byName(halted.waves[0]!.clusters.map((c) => c.name)),
          early: byName(halted.waves[1]!.clusters.map((c) => c.name)),
          rest: byName(halted.waves[2]!.clusters.map((c) => c.name)),
        };
        expect(waves.canary.map((c) => c.name)).to.deep.equal(["c00"]);
        expect(halted.message).to.include("cluster c00 is Degraded: pod c00-0 CrashLoopBackOff");
        expect(halted.waves[0]!.clusters[0]).to.deep.include({
          name: "c00",
          base: "to",
          health: "Degraded",
          reason: "pod c00-0 CrashLoopBackOff",
        });
        expect(
          halted.waves
            .slice(1)
            .flatMap((w) => w.clusters)
            .filter((c) => c.base !== "from" || c.health !== null),
          "later waves untouched",
        ).to.deep.equal([]);
        expect(await imageTags(waves.canary)).to.deep.equal(new Set(["0.2.0"]));
        // Some ticks later nothing else has moved.
        await new Promise((r) => setTimeout(r, 4000));
        expect((await status())!.phase).to.equal("Halted");
        const later = [...waves.early, ...waves.rest];
        const now = await snapshotClusters(kube(), later);
        expect(snapshotDifferences(restrict(atOld, later), now), "later-wave objects changed").to.deep.equal([]);
        expect(rewrittenObjects(restrict(atOld, later), now), "later-wave objects rewritten").to.deep.equal([]);
        expect(writesTo(mark, later), "the reconciler's writes to later-wave clusters").to.deep.equal([]);
        expect(
          snapshotDifferences(restrict(atOld, waves.canary), await snapshotClusters(kube(), waves.canary)),
        ).to.include("StatefulSet vc-c00/c00");
        // vc diff renders where the reconciler does: no drift, and it names why the later waves do not change.
        const diff = await runVc([
          "diff",
          fleet.dir,
          "--target",
          "kube",
          "--kubeconfig",
          kube().kubeconfigPath,
          "--exit-code",
        ]);
        expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
        expect(diff.stderr).to.include(
          `cluster ${waves.early[0]!.name}: held by rollout ${halted.id}: wave 2/3 (early)`,
        );
        expect(diff.stderr).to.include(`cluster ${waves.rest[0]!.name}: held by rollout ${halted.id}: wave 3/3 (rest)`);
        expect(diff.stderr).to.not.include("cluster c00: held");
      },
    );

    it("the syncer's ServiceAccount gets 403 writing the rollout record and the base snapshots", async () => {
      const cms = await kube().request<{ items: KubeObject[] }>("GET", `/api/v1/namespaces/${RECORDS}/configmaps`);
      const record = cms.body.items.find((c) => c.metadata.labels?.["vc.orch.io/record"] === "rollout")!;
      const base = cms.body.items.find((c) => c.metadata.labels?.["vc.orch.io/record"] === "base")!;
      expect(record, "the rollout record").to.not.equal(undefined);
      expect(base, "a base snapshot").to.not.equal(undefined);
      const syncer = await kube().serviceAccountKubeconfig("vc-c00", "vc-c00");
      const as = (args: string[]) => kubectl(kube(), args, { kubeconfig: syncer });
      const token = (
        await kube().request<{ status: { token: string } }>(
          "POST",
          "/api/v1/namespaces/vc-c00/serviceaccounts/vc-c00/token",
          {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenRequest",
            spec: { audiences: ["https://kubernetes.default.svc.cluster.local"], expirationSeconds: 600 },
          },
        )
      ).body.status.token;
      const mark = kube().writes().length;
      const tries: Array<[string, string, unknown, string?]> = [
        [
          "PATCH",
          `/api/v1/namespaces/${RECORDS}/configmaps/${record.metadata.name}`,
          { data: { request: JSON.stringify({ action: "resume", by: "tenant", at: new Date().toISOString() }) } },
          "application/merge-patch+json",
        ],
        [
          "PUT",
          `/api/v1/namespaces/${RECORDS}/configmaps/${record.metadata.name}`,
          { ...record, data: { ...(record as { data?: Record<string, string> }).data, rollout: "{}" } },
        ],
        ["DELETE", `/api/v1/namespaces/${RECORDS}/configmaps/${record.metadata.name}`, undefined],
        [
          "PATCH",
          `/api/v1/namespaces/${RECORDS}/configmaps/${base.metadata.name}`,
          { data: { "fleet__values.yaml": "controlPlane: {}\n" } },
          "application/merge-patch+json",
        ],
        [
          "POST",
          `/api/v1/namespaces/${RECORDS}/configmaps`,
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "vc-base-0000000000000000", labels: { "vc.orch.io/record": "base" } },
            data: {},
          },
        ],
        ["GET", `/api/v1/namespaces/${RECORDS}/configmaps/${record.metadata.name}`, undefined],
      ];
      for (const [method, path, body, contentType] of tries) {
        const res = await kube().request(method, path, body, { token, ...(contentType ? { contentType } : {}) });
        expect(res.status, `${method} ${path}`).to.equal(403);
      }
      // kubectl as the syncer, the way a tenant would try it.
      const kc = await as(["-n", RECORDS, "annotate", "configmap", record.metadata.name, "x=y"]);
      expect(kc.code).to.not.equal(0);
      expect(kc.stderr).to.match(/forbidden/i);
      expect(
        kube()
          .writes()
          .slice(mark)
          .filter((w) => w.code < 400 && w.namespace === RECORDS),
        "writes that got through",
      ).to.deep.equal([]);
    });

    it(
      "vc rollout resume after the fix: the canary passes, the early wave moves, the rest stays " + "where it was",
      async () => {
        const mark = kube().writes(RECONCILER).length;
        hosts.heal("vc-c00");
        const resumed = await rollout("resume");
        expect(resumed.code, resumed.stdout + resumed.stderr).to.equal(0);
        const waiting = await waitPhase("Waiting", 1, "the early wave to pass and wait for resume (pause: manual)");
        expect(waiting.waves[1]!.clusters.map((c) => c.health)).to.deep.equal(["Healthy", "Healthy"]);
        expect(await imageTags([...waves.canary, ...waves.early])).to.deep.equal(new Set(["0.2.0"]));
        const rest = await snapshotClusters(kube(), waves.rest);
        expect(snapshotDifferences(restrict(atOld, waves.rest), rest)).to.deep.equal([]);
        expect(rewrittenObjects(restrict(atOld, waves.rest), rest)).to.deep.equal([]);
        expect(writesTo(mark, waves.rest)).to.deep.equal([]);
        // The table form names the phase and each wave.
        const table = await rollout("status");
        expect(table.code, table.stderr).to.equal(0);
        expect(table.stdout)
          .to.match(/Waiting/)
          .and.match(/canary/)
          .and.match(/early/)
          .and.match(/rest/);
      },
    );

    it(
      "a reconciler killed (SIGKILL) mid-wave and restarted resumes in the same wave, and completes the " + "rollout",
      async () => {
        await hosts.stop(); // moved clusters stay Progressing: the wave cannot pass while the reconciler is killed
        const resumed = await rollout("resume");
        expect(resumed.code, resumed.stdout + resumed.stderr).to.equal(0);
        let mid: RolloutStatus | undefined;
        await waitFor(
          async () => {
            mid = await status();
            return mid?.phase === "Progressing" && mid.wave?.index === 2 && mid.waves[2]!.moved === 5;
          },
          `five clusters of the rest to move:\n${reconciler.log().slice(-3000)}`,
          120_000,
        );
        await reconciler.kill();
        // Read again once it is dead: the status read above may be one step older than what the killed process left.
        mid = await status();
        const movedBefore = mid!.waves[2]!.clusters.filter((c) => c.base === "to")
          .map((c) => c.name)
          .sort();
        const notMoved = byName(mid!.waves[2]!.clusters.filter((c) => c.base !== "to").map((c) => c.name));
        const mark = kube().writes(RECONCILER).length;
        reconciler = startReconciler(fleet.dir, kube().kubeconfigFor(RECONCILER), ["--interval", "1s"]);
        // Its first pass is full: every cluster reconciled once (the moved ones at the target, the others at their
        // pins).
        await waitFor(
          () => (reconciler.log().match(/"msg":"reconciled"/g) ?? []).length >= 30,
          `the restarted reconciler's full pass:\n${reconciler.log().slice(-3000)}`,
          120_000,
        );
        await new Promise((r) => setTimeout(r, 3000));
        try {
          const again = (await status())!;
          expect(again.phase).to.equal("Progressing");
          expect(again.wave?.index).to.equal(2);
          // Every cluster moved before the kill is still moved; the restarted reconciler may go on moving (a moved
          // cluster whose objects did not change is Healthy at once), never past maxUnavailable clusters not Healthy.
          const movedAfter = again.waves[2]!.clusters.filter((c) => c.base === "to");
          expect(movedAfter.map((c) => c.name)).to.include.members(movedBefore);
          expect(movedAfter.filter((c) => c.health !== "Healthy").length).to.be.at.most(5);
          // The clusters the wave has not reached are still at the old base, untouched by the restarted reconciler.
          const untouched = notMoved.filter((c) => !movedAfter.some((m) => m.name === c.name));
          expect(untouched.length).to.be.greaterThan(0);
          expect(
            snapshotDifferences(restrict(atOld, untouched), await snapshotClusters(kube(), untouched)),
          ).to.deep.equal([]);
          expect(writesTo(mark, untouched)).to.deep.equal([]);
        } finally {
          // The controllers come back whatever happened, so the next case starts from a fleet that can settle.
          hosts.start(300);
        }
        await waitPhase("Completed", 2, "the rollout to complete");
        expect(await imageTags(fleet.clusters)).to.deep.equal(new Set(["0.2.0"]));
      },
    );

    it("vc rollout abort returns the moved clusters to the base they were at, byte for byte", async () => {
      const ignore = [ANNOTATIONS.revision];
      const at02 = await snapshotClusters(kube(), fleet.clusters, { ignoreAnnotations: ignore });
      fleet.setBaseTag("0.3.0");
      fleet.commit("base: control plane 0.3.0");
      await waitPhase("Waiting", 1, "the new rollout's early wave to wait for resume");
      expect(await imageTags([...waves.canary, ...waves.early])).to.deep.equal(new Set(["0.3.0"]));
      const aborted = await rollout("abort");
      expect(aborted.code, aborted.stdout + aborted.stderr).to.equal(0);
      const done = await waitPhase("Aborted", 1, "the rollout to be aborted");
      const images = Object.fromEntries(
        await Promise.all(fleet.clusters.map(async (c) => [c.name, (await liveImage(kube(), c))?.replace(/^.*:/, "")])),
      );
      expect(
        new Set(Object.values(images)),
        `${done.message}: ${JSON.stringify(images)}\n${reconciler.log().slice(-4000)}`,
      ).to.deep.equal(new Set(["0.2.0"]));
      expect(
        snapshotDifferences(at02, await snapshotClusters(kube(), fleet.clusters, { ignoreAnnotations: ignore })),
      ).to.deep.equal([]);
      const again = await rollout("abort");
      expect(again.code, "nothing to act on").to.equal(1);
    });
  });
});

/** The part of a snapshot that belongs to `clusters`. */
function restrict(s: ClusterSnapshot, clusters: readonly FleetCluster[]): ClusterSnapshot {
  const ns = new Set(clusters.map((c) => c.hostNamespace));
  const mine = (key: string) => {
    const ref = key.slice(key.indexOf(" ") + 1);
    const first = ref.split("/")[0]!;
    return ns.has(first) || [...ns].some((n) => ref.endsWith(`-x-${n}`));
  };
  return {
    objects: new Map([...s.objects].filter(([k]) => mine(k))),
    versions: new Map([...s.versions].filter(([k]) => mine(k))),
  };
}
