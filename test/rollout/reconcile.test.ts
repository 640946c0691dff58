// The reconciler drives a rollout on the API test server (statuses set as a controller would): the canary moves alone,
// later waves stay byte for byte at their pinned base, a Degraded canary halts, resume after a fix completes it,
// abort returns moved clusters, a restarted reconciler resumes in the same wave, and a cluster's own change is decided
// by the rule of docs/rollouts.md (its three cases).
import { expect } from "chai";
import { readClusterHealth } from "../../src/health/read.js";
import type { KubeClient } from "../../src/host/client.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { RolloutStore, rolloutName } from "../../src/rollout/store.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import type { PassDeps, PassState } from "../../src/reconciler/pass.js";
import { Bed, name, newPassState, runPass } from "../reconciler/harness.js";
import { settle as settleCluster } from "./settle.js";
import { ReconcileLoop } from "../../src/reconciler/loop.js";

const N = 4;
const tagValues = (tag: string, extra = "") =>
  `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n${extra}`;
const ROLLOUT =
  'waves:\n  - name: canary\n    selector: {matchLabels: {canary: "true"}}\n  - name: rest\nmaxUnavailable: 2\nhealthGate: {timeout: 1h}\n';

describe("rollout: the reconciler drives it", function () {
  this.timeout(120_000);
  let bed: Bed;
  let deps: PassDeps;
  let state: PassState;
  let admin: KubeClient;
  const canary = name(0);
  const later = [name(1), name(2), name(3)];

  const record = (): RolloutRecord | undefined => {
    const cm = bed.kube.get("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE, rolloutName(""));
    return cm ? (JSON.parse((cm.data as Record<string, string>).rollout!) as RolloutRecord) : undefined;
  };
  const tagOf = (c: string): string => /"image":"[^"]*:([^"]+)"/.exec(JSON.stringify(bed.statefulSet(c)!.spec))![1]!;
  const settle = (c: string, pod: "ready" | "crashing" = "ready"): Promise<void> => settleCluster(bed, admin, c, pod);
  const specs = (cs: string[]) => cs.map((c) => JSON.stringify(bed.statefulSet(c)!.spec));
  const writesTo = (cs: string[]) =>
    bed.kube.requests.filter((r) => r.method !== "GET" && cs.some((c) => r.path.includes(`/namespaces/vc-${c}/`)));
  const pass = (kind: "full" | "incremental" = "incremental") => runPass(deps, state, { kind });

  beforeEach(async () => {
    bed = await Bed.start(N, 0);
    bed.repo.write({ "fleet/values.yaml": tagValues("1.0"), "fleet/rollout.yaml": ROLLOUT });
    bed.edit(`clusters/${canary}/cluster.yaml`, /$/, 'labels:\n  canary: "true"\n');
    bed.repo.commit("fleet base and rollout");
    const client = bed.client();
    admin = bed.client();
    deps = bed.deps({ health: (ns, desired) => readClusterHealth(client, ns, desired) });
    state = newPassState();
    await pass("full");
    for (const c of [canary, ...later]) await settle(c);
    await pass("full");
  });
  afterEach(() => bed.close());

  it("pins every cluster on the first pass that sees rollout.yaml, without a rollout", async () => {
    const r = record()!;
    expect(r.phase).to.equal("Completed");
    expect(r.waves.flatMap((w) => w.clusters)).to.deep.equal([]);
    for (const c of [canary, ...later]) expect(bed.statusData(c)!.base).to.equal(r.to.digest);
    expect([canary, ...later].map(tagOf)).to.deep.equal(["1.0", "1.0", "1.0", "1.0"]);
  });

  it(
    "moves the canary alone, halts when it is Degraded with later waves untouched, and completes after a fix " +
      "and resume",
    async () => {
      const before = specs(later);
      const d0 = record()!.to.digest;
      bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
      bed.repo.commit("new control-plane tag");
      bed.kube.resetRequests();
      await pass();
      let r = record()!;
      expect(r).to.deep.include({ phase: "Progressing", wave: 0 });
      expect(r.waves).to.deep.equal([
        { name: "canary", clusters: [canary] },
        { name: "rest", clusters: [...later].sort() },
      ]);
      expect(tagOf(canary)).to.equal("2.0");
      expect(bed.statusData(canary)).to.include({ base: r.to.digest, previousBase: d0 });
      // Later waves: byte for byte as they were, nothing written in their namespaces, their records still at the old
      // base.
      expect(specs(later)).to.deep.equal(before);
      expect(writesTo(later)).to.deep.equal([]);
      for (const c of later) expect(bed.statusData(c)!.base).to.equal(d0);

      // The canary's new pod crashes: the next ticks read its health (Degraded) and halt the wave.
      await settle(canary, "crashing");
      await pass();
      await pass();
      r = record()!;
      expect(r.phase).to.equal("Halted");
      expect(r.message).to.equal(`wave canary halted: cluster ${canary} is Degraded: pod ${canary}-0 CrashLoopBackOff`);
      await pass("full");
      expect(specs(later)).to.deep.equal(before);
      expect(record()!.phase).to.equal("Halted");

      // Fixed on the host, then resumed: the wave is checked again and the rollout goes on to the end.
      await settle(canary);
      await new RolloutStore(bed.client(), DEFAULT_RECORDS_NAMESPACE).request("", {
        action: "resume",
        by: "alice",
        at: new Date().toISOString(),
      });
      for (let i = 0; i < 10 && record()!.phase !== "Completed"; i++) {
        await pass();
        for (const c of later) if (tagOf(c) === "2.0") await settle(c);
      }
      r = record()!;
      expect(r.phase).to.equal("Completed");
      expect([canary, ...later].map(tagOf)).to.deep.equal(["2.0", "2.0", "2.0", "2.0"]);
      for (const c of [canary, ...later]) expect(bed.statusData(c)!.base).to.equal(r.to.digest);
    },
  );

  it("abort returns moved clusters; a reconciler restarted mid-rollout resumes in the same wave", async () => {
    const before = specs(later);
    bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
    bed.repo.commit("new control-plane tag");
    await pass();
    expect(tagOf(canary)).to.equal("2.0");
    // A new process: its first pass is full and reads where the rollout is.
    state = newPassState();
    bed.kube.resetRequests();
    await pass("full");
    expect(record()).to.deep.include({ phase: "Progressing", wave: 0 });
    expect(specs(later)).to.deep.equal(before);
    expect(writesTo(later)).to.deep.equal([]);
    expect(tagOf(canary)).to.equal("2.0");

    await new RolloutStore(bed.client(), DEFAULT_RECORDS_NAMESPACE).request("", {
      action: "abort",
      by: "alice",
      at: new Date().toISOString(),
    });
    await pass();
    expect(record()!.phase).to.equal("Aborting");
    expect(tagOf(canary)).to.equal("1.0");
    await pass();
    expect(record()!.phase).to.equal("Aborted");
    expect([canary, ...later].map(tagOf)).to.deep.equal(["1.0", "1.0", "1.0", "1.0"]);
    await pass("full");
    expect([canary, ...later].map(tagOf)).to.deep.equal(["1.0", "1.0", "1.0", "1.0"]);
  });

  it("costs one GET per idle incremental pass with fleet/rollout.yaml and no running rollout", async () => {
    bed.kube.resetRequests();
    await pass();
    expect(bed.kube.requests.map((r) => `${r.method} ${r.path}`)).to.deep.equal([
      `GET /api/v1/namespaces/vc-system/configmaps/${rolloutName("")}`,
    ]);
  });

  it(
    "the loop ticks every rolloutIntervalMs while a rollout runs, and goes back to its poll interval once it " +
      "is over",
    async () => {
      bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
      bed.repo.commit("new control-plane tag");
      const delays: number[] = [];
      const clock = {
        setTimeout: (fn: () => void, ms: number) => (delays.push(ms), setTimeout(fn, ms > 60_000 ? 1_000_000_000 : ms)),
        clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
      };
      const loop = new ReconcileLoop(deps, {
        intervalMs: 3_600_000,
        resyncMs: 3_600_000,
        watch: false,
        rolloutIntervalMs: 50,
        clock,
      });
      const before = record()!.id;
      await loop.start();
      try {
        for (let i = 0; i < 400 && (record()!.id === before || record()!.phase !== "Completed"); i++) {
          for (const c of [canary, ...later]) if (tagOf(c) === "2.0") await settle(c);
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(record()!.id).to.not.equal(before);
        expect(record()!.phase).to.equal("Completed");
        expect(delays.filter((d) => d === 50).length, JSON.stringify(delays)).to.be.greaterThan(2);
        await new Promise((r) => setTimeout(r, 200));
        await loop.idle();
        expect(delays.at(-1)).to.be.greaterThan(60_000);
        expect([canary, ...later].map(tagOf)).to.deep.equal(["2.0", "2.0", "2.0", "2.0"]);
      } finally {
        await loop.stop();
      }
    },
  );

  it(
    "a full pass follows a step taken between its chunks: a cluster sent back is not rendered at the new " +
      "base again",
    async () => {
      bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
      bed.repo.commit("new control-plane tag");
      await pass();
      expect(tagOf(canary)).to.equal("2.0");
      let inner = false;
      // The full pass reads the record first (canary moved); its first chunk done, an abort arrives and an incremental
      // pass acts on it before the full pass reaches the canary's chunk.
      const abortNow = async (from: string) => {
        inner = true;
        await new RolloutStore(bed.client(), DEFAULT_RECORDS_NAMESPACE).request("", {
          action: "abort",
          by: "alice",
          at: new Date().toISOString(),
        });
        return runPass(deps, state, { kind: "incremental", from });
      };
      const full = { ...deps, chunkSize: 1, betweenChunks: async (rev: string) => (inner ? undefined : abortNow(rev)) };
      await runPass(full, state, { kind: "full" });
      expect(inner).to.equal(true);
      expect(record()!.phase).to.equal("Aborting");
      expect(tagOf(canary)).to.equal("1.0");
    },
  );

  it(
    "ends a running rollout when fleet/rollout.yaml is removed: the newest base applies to every " + "cluster",
    async () => {
      bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
      bed.repo.commit("new control-plane tag");
      await pass();
      expect(record()).to.deep.include({ phase: "Progressing", wave: 0 });
      expect(later.map(tagOf)).to.deep.equal(["1.0", "1.0", "1.0"]);
      bed.repo.write({ "fleet/rollout.yaml": null });
      bed.repo.commit("no more rollouts");
      await pass("full");
      const r = record()!;
      expect(r.phase).to.equal("Completed");
      expect(r.message).to.contain("fleet/rollout.yaml was removed");
      expect([canary, ...later].map(tagOf)).to.deep.equal(["2.0", "2.0", "2.0", "2.0"]);
      // Unpinned again: no base on the records.
      for (const c of [canary, ...later]) expect(bed.statusData(c)!.base).to.equal(undefined);
    },
  );

  it(
    "decides a held cluster's own change: valid over its pinned base applies now; needing the new base waits; " +
      "invalid over both is invalid",
    async () => {
      const [a, b, c] = later as [string, string, string];
      // The old base runs the built-in metrics server for the group of b; the new one turns it off (and moves the tag).
      bed.repo.write({
        "fleet/groups.yaml": "groups:\n  builtin:\n    matchLabels:\n      metrics: builtin\n",
        "fleet/values.builtin.yaml": "deploy:\n  metricsServer:\n    enabled: true\n",
      });
      bed.edit(`clusters/${b}/cluster.yaml`, /$/, "labels:\n  metrics: builtin\n");
      bed.repo.commit("built-in metrics server for one group");
      await pass();
      expect(record()!.waves).to.deep.equal([
        { name: "canary", clusters: [] },
        { name: "rest", clusters: [b] },
      ]);
      for (let i = 0; i < 6 && record()!.phase !== "Completed"; i++) {
        await settle(b);
        await pass();
      }
      expect(record()!.phase).to.equal("Completed");
      bed.repo.write({
        "fleet/values.yaml": tagValues("2.0"),
        "fleet/values.builtin.yaml": "deploy:\n  metricsServer:\n    enabled: false\n",
      });
      bed.repo.commit("new tag, no built-in metrics server");
      await pass();
      expect(record()).to.deep.include({ phase: "Progressing", wave: 0 });
      // a: valid over its pinned base: applied now, still at the old tag. b: turns the metrics integration on, which
      // only the new base allows (not both metrics servers): it waits. c: invalid whatever the base.
      bed.edit(`clusters/${a}/values.yaml`, /cpu: \d+m/, "cpu: 333m");
      bed.repo.write({ [`clusters/${b}/values.metrics.yaml`]: "integrations:\n  metricsServer:\n    enabled: true\n" });
      bed.edit(`clusters/${c}/values.yaml`, /cpu: \d+m/, "cpu: lots");
      bed.repo.commit("own changes during the rollout");
      const res = await pass();
      const run = (x: string) => res.clusters.find((r) => r.cluster === x)!;
      expect(run(a).result).to.equal("applied");
      expect(JSON.stringify(bed.statefulSet(a)!.spec)).to.include("333m");
      expect(tagOf(a)).to.equal("1.0");
      const id = record()!.id;
      expect(run(b).result, run(b).message).to.equal("invalid");
      expect(run(b).message, run(b).message).to.match(
        new RegExp(`^waiting for rollout ${id} \\(wave 2, rest\\): its folder needs the base being rolled out`),
      );
      expect(run(c).result).to.equal("invalid");
      expect(run(c).message).to.not.include("waiting for rollout");
      expect(run(c).message).to.match(new RegExp(`clusters/${c}/values.yaml:\\d+:\\d+`));
    },
  );
});
