// The reconciler at fleet scale (issue #26): a full pass streamed chunk by chunk with a compact index for the
// cross-cluster rules, each cluster's live objects read once, changes run between chunks (changes before chores),
// the resync interval counted from the end of a pass (injected clock), summaries kept by --once, and SIGTERM
// finishing the clusters in hand (a real signal to a real process).
import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { silentLogger } from "../../src/model/log.js";
import { defaultEngine } from "../../src/pipeline/engine.js";
import { DirStatusStore } from "../../src/records/dir-store.js";
import type { LoadOptions } from "../../src/pipeline/engine.js";
import { ReconcileLoop, type Clock } from "../../src/reconciler/loop.js";
import { newPassState, runPass, type PassDeps, type PassResult } from "../../src/reconciler/pass.js";
import { reconcileOnce } from "../../src/reconciler/service.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { DirTarget } from "../../src/sinks/dir.js";
import type { KubeObject } from "../../src/kube/object.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** A dir: target that counts its reads. */
class CountingDirTarget extends DirTarget {
  inventoryReads = new Map<string, number>();
  fleetReads = 0;
  override async listInventory(cluster: string): Promise<KubeObject[]> {
    this.inventoryReads.set(cluster, (this.inventoryReads.get(cluster) ?? 0) + 1);
    return super.listInventory(cluster);
  }
  override async listFleetInventory(): Promise<Map<string, KubeObject[]>> {
    this.fleetReads++;
    return super.listFleetInventory();
  }
}

describe("reconciler at fleet scale", function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  let out: string;
  const loads: LoadOptions[] = [];
  const deps = (target: DirTarget, over: Partial<PassDeps> = {}): PassDeps => ({
    engine: { ...defaultEngine, load: (root, opts) => (loads.push(opts), defaultEngine.load(root, opts)) },
    target,
    store: new DirStatusStore(target.root),
    allowMassPrune: false,
    mayWrite: () => true,
    source: new FolderSource(repo),
    logger: silentLogger,
    ...over,
  });

  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-scale-"));
    repo = join(tmp, "repo");
    out = join(tmp, "out");
    loads.length = 0;
    await generateFleet(repo, { clusters: 7, meshPerCluster: 1 });
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it(
    "streams a full pass: specs are loaded a chunk at a time, and a namespace claimed across chunks is still a " +
      "conflict",
    async () => {
      // Two clusters in different chunks claim one host namespace: both invalid, as when the fleet was loaded at once.
      // Sorted, chunks of 2: [billing-0005, catalog-0003] ... [search-0001]: the pair is in the first and last chunks.
      const [first, last] = [fleetClusterName(5), fleetClusterName(1)];
      writeFileSync(join(repo, "clusters", last, "cluster.yaml"), `namespace: vc-${first}\n`);
      const res = await runPass(deps(new DirTarget(out), { chunkSize: 2 }), newPassState(), { kind: "full" });
      const full = loads.filter((l) => l.detail !== "summary");
      expect(full.length).to.equal(4);
      expect(Math.max(...full.map((l) => l.clusters!.length))).to.equal(2);
      const by = new Map(res.clusters.map((c) => [c.cluster, c]));
      expect(by.get(first)!.result).to.equal("invalid");
      expect(by.get(last)!.result).to.equal("invalid");
      expect(by.get(last)!.message).to.include(`is also used by cluster ${first}`);
      expect(by.get(first)!.message).to.include(`is also used by cluster ${last}`);
      const chunkOf = (n: string) => full.findIndex((l) => l.clusters!.includes(n));
      expect(chunkOf(first)).to.not.equal(chunkOf(last));
      expect(res.clusters.filter((c) => c.result === "applied")).to.have.length(5);
    },
  );

  it("reads each cluster's live objects once in a full pass over dir:, and never the whole fleet's", async () => {
    await runPass(deps(new DirTarget(out)), newPassState(), { kind: "full" });
    // A cluster removed from the repository is found from the folder listing, then read once in its chunk.
    rmSync(join(repo, "clusters", fleetClusterName(3)), { recursive: true });
    const target = new CountingDirTarget(out);
    const res = await runPass(deps(target, { chunkSize: 3 }), newPassState(), { kind: "full" });
    expect(res.clusters).to.have.length(7);
    expect(target.fleetReads).to.equal(0);
    expect([...target.inventoryReads.values()]).to.deep.equal(Array(7).fill(1));
  });

  it("runs a change between the chunks of a full pass, before the pass ends (changes before chores)", async () => {
    const target = new DirTarget(out);
    const events: string[] = [];
    let loop: ReconcileLoop | undefined;
    let armed = false;
    const changed = fleetClusterName(6);
    const d = deps(target, {
      chunkSize: 2,
      concurrency: 1,
      onCluster: (run) => {
        if (!armed) return;
        armed = false;
        // A commit lands while the first chunk is in hand.
        const file = join(repo, "clusters", changed, "values.yaml");
        writeFileSync(file, readFileSync(file, "utf8").replace(/cpu: \d+m/, "cpu: 777m"));
        events.push(`change during ${run.cluster}`);
        loop!.trigger({ kind: "incremental", paths: [`clusters/${changed}/values.yaml`] });
      },
    });
    loop = new ReconcileLoop(d, {
      intervalMs: 3_600_000,
      resyncMs: 3_600_000,
      watch: false,
      onPass: (e) => {
        if ("error" in e) events.push(`error ${e.error.message}`);
        else events.push(`${e.kind} ${e.clusters.map((c) => `${c.cluster}:${c.result}`).join(",")}`);
      },
    });
    try {
      await loop.start();
      await loop.idle();
      expect(events).to.have.length(1);
      armed = true;
      loop.trigger({ kind: "full" });
      await loop.idle();
    } finally {
      await loop.stop();
    }
    const firstInOrder = Array.from({ length: 7 }, (_, i) => fleetClusterName(i)).sort()[0];
    expect(events.slice(1, 3)).to.deep.equal([`change during ${firstInOrder}`, `incremental ${changed}:applied`]);
    expect(events[3]).to.match(/^full /);
    const manifests = readdirSync(join(out, changed), { recursive: true, withFileTypes: true }).filter((e) =>
      e.isFile(),
    );
    expect(manifests.some((e) => readFileSync(join(e.parentPath, e.name), "utf8").includes("777m"))).to.equal(true);
  });

  it("counts the resync interval from the end of the last full pass (injected clock)", async () => {
    const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
    const clock: Clock = {
      setTimeout: (fn, ms) => (timers.push({ fn, ms, cleared: false }), timers.length - 1),
      clearTimeout: (h) => void (typeof h === "number" && timers[h] && (timers[h]!.cleared = true)),
    };
    const resyncs = () => timers.filter((t) => t.ms >= 900_000 && !t.cleared);
    const atPassEnd: number[] = [];
    const passes: PassResult[] = [];
    const loop = new ReconcileLoop(deps(new DirTarget(out)), {
      intervalMs: 10,
      resyncMs: 1_000_000,
      watch: false,
      clock,
      onPass: (e) => {
        if ("error" in e) throw e.error;
        passes.push(e);
        atPassEnd.push(resyncs().length);
      },
    });
    try {
      await loop.start();
      expect(resyncs(), "nothing armed while the first pass runs").to.have.length(0);
      await loop.idle();
      expect(atPassEnd).to.deep.equal([0]);
      expect(resyncs()).to.have.length(1);
      // The resync fires: one full pass, and the next resync is armed once it has ended, not when it began.
      const first = resyncs()[0]!;
      first.fn();
      first.cleared = true;
      expect(resyncs()).to.have.length(0);
      await loop.idle();
      expect(passes.map((p) => p.kind)).to.deep.equal(["full", "full"]);
      expect(atPassEnd).to.deep.equal([0, 0]);
      expect(resyncs()).to.have.length(1);
    } finally {
      await loop.stop();
    }
  });

  it("--once keeps summaries, not plans: each chunk's plans go to onChunk, then are let go", async () => {
    const chunks: Array<Array<{ cluster: string; planned: boolean }>> = [];
    const res = await reconcileOnce({
      repo,
      branch: "main",
      target: `dir:${out}`,
      intervalMs: 60_000,
      resyncMs: 60_000,
      leaderElect: false,
      allowMassPrune: false,
      logger: silentLogger,
      cacheDir: join(tmp, "cache"),
      onChunk: (runs) => chunks.push(runs.map((r) => ({ cluster: r.cluster, planned: r.sync !== undefined }))),
    });
    expect(res.clusters).to.have.length(7);
    expect(res.clusters.every((c) => c.sync === undefined)).to.equal(true);
    expect(chunks.flat().map((c) => c.cluster)).to.deep.equal(res.clusters.map((c) => c.cluster));
    expect(chunks.flat().every((c) => c.planned)).to.equal(true);
  });
});

describe("reconciler: SIGTERM", function () {
  this.timeout(180_000);
  it("finishes the clusters in hand, records their status, starts no other and exits 0", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-sigterm-"));
    try {
      const repo = join(tmp, "repo");
      const out = join(tmp, "out");
      const n = 150;
      await generateFleet(repo, { clusters: n, meshPerCluster: 1 });
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(ROOT, "src/cli/main.ts"),
          "reconcile",
          "--repo",
          repo,
          "--target",
          `dir:${out}`,
          "--interval",
          "1h",
          "--resync",
          "1h",
          "--concurrency",
          "2",
          "--cache-dir",
          join(tmp, "cache"),
        ],
        { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
      );
      let log = "";
      let signalled = false;
      const exited = new Promise<number | null>((r) => child.once("exit", r));
      child.stderr!.on("data", (d: Buffer) => {
        log += d.toString();
        if (!signalled && log.includes('"msg":"reconciled"')) {
          signalled = true;
          child.kill("SIGTERM");
        }
      });
      const code = await exited;
      expect(code, log.slice(-2000)).to.equal(0);
      expect(log).to.include('"msg":"shutting down: finishing the clusters in hand"');
      expect(log).to.include('"msg":"stopped"');
      const reconciled = [...log.matchAll(/"msg":"reconciled","cluster":"([^"]+)"/g)].map((m) => m[1]!).sort();
      expect(reconciled.length).to.be.greaterThan(0);
      expect(reconciled.length, "the pass stopped: clusters not started were left for the next start").to.be.lessThan(
        n,
      );
      // Every cluster reconciled before the exit has its status recorded; no other has one.
      const statuses = readdirSync(join(out, ".vc-status"))
        .filter((f) => f.endsWith(".json"))
        .map((f) => f.slice(0, -5))
        .sort();
      expect(statuses).to.deep.equal(reconciled);
      expect(existsSync(join(out, fleetClusterName(n - 1)))).to.equal(false);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("deploy/reconciler: the shutdown fits the grace period", () => {
  it("terminationGracePeriodSeconds leaves room after the reconciler's shutdown deadline", async () => {
    const { loadAll } = await import("js-yaml");
    const { SHUTDOWN_DEADLINE_MS } = await import("../../src/reconciler/service.js");
    const docs = loadAll(readFileSync(join(ROOT, "deploy/reconciler/deployment.yaml"), "utf8")) as Array<{
      kind: string;
      spec: { template: { spec: { terminationGracePeriodSeconds?: number } } };
    }>;
    const grace = docs.find((d) => d.kind === "Deployment")!.spec.template.spec.terminationGracePeriodSeconds;
    expect(grace, "set explicitly").to.be.a("number");
    expect(grace! * 1000).to.be.greaterThan(SHUTDOWN_DEADLINE_MS);
  });
});
