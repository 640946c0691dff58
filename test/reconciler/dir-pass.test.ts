// A full pass over a dir: target: each cluster's folder is read once, and the pass plans exactly what vc diff plans
// from the same files (the manifests read synchronously, parsed by js-yaml's CommonJS build), drift edited by hand
// included.
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { defaultEngine } from "../../src/pipeline/engine.js";
import { DirStatusStore } from "../../src/records/dir-store.js";
import { newPassState, runPass, type PassDeps } from "../../src/reconciler/pass.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { silentLogger } from "../../src/model/log.js";
import { DirTarget, manifestPath } from "../../src/sinks/dir.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { planFleet } from "../../src/pipeline/fleet.js";
import type { ClusterRun } from "../../src/reconciler/cluster.js";
import type { Plan } from "../../src/plan/types.js";

const CLUSTERS = 7;
const name = fleetClusterName;

/** What a plan changes, comparable across plans: per cluster, each object's action. */
function changesOf(plans: Iterable<Plan>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of plans)
    out[p.cluster] = p.changes.map((c) => `${c.action} ${c.ref.kind} ${c.ref.namespace ?? ""}/${c.ref.name}`);
  return out;
}

describe("reconciler: a full pass over a dir: target", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  let target: DirTarget;
  let reads: string[];

  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-dir-pass-"));
    repo = join(tmp, "repo");
    await generateFleet(repo, { clusters: CLUSTERS, meshPerCluster: 2 });
    target = new DirTarget(join(tmp, "out"));
    reads = [];
    const list = target.listInventory.bind(target);
    target.listInventory = (cluster: string) => {
      reads.push(cluster);
      return list(cluster);
    };
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const deps = (over: Partial<PassDeps> = {}): PassDeps => ({
    engine: defaultEngine,
    target,
    store: new DirStatusStore(target.root),
    allowMassPrune: false,
    mayWrite: () => true,
    source: new FolderSource(repo),
    logger: silentLogger,
    keepPlans: true,
    chunkSize: 3,
    ...over,
  });
  const plansOf = (runs: ClusterRun[]): Plan[] => runs.filter((r) => r.sync).map((r) => r.sync!.plan);
  /** vc diff's plans of the same repository and files (the whole fleet's inventory read first). */
  const diffPlans = async (prune = true): Promise<Plan[]> =>
    (
      await planFleet(
        target,
        await loadDesiredIndex(repo, "local"),
        { prune, allowMassPrune: true },
        { keepPlans: true },
      )
    ).plans;
  const file = (cluster: string, kind: string, objName: string, apiVersion: string): string =>
    join(target.root, manifestPath(cluster, { apiVersion, kind, name: objName, namespace: `vc-${cluster}` }));

  it(
    "reads each cluster's folder once, and an up-to-date target plans as vc diff does: nothing " + "to change",
    async () => {
      await runPass(deps(), newPassState(), { kind: "full" });
      reads = [];
      const res = await runPass(deps(), newPassState(), { kind: "full" });
      const names = Array.from({ length: CLUSTERS }, (_, i) => name(i)).sort();
      expect([...reads].sort()).to.deep.equal(names);
      expect(res.clusters.map((c) => [c.cluster, c.result])).to.deep.equal(names.map((n) => [n, "applied"]));
      for (const r of res.clusters)
        expect(r.sync!.counts).to.include({ created: 0, updated: 0, deleted: 0, failed: 0 });
      expect(changesOf(plansOf(res.clusters))).to.deep.equal(changesOf(await diffPlans()));
    },
  );

  it("finds drift edited by hand in the hydrated files, as vc diff does, and undoes it", async () => {
    await runPass(deps(), newPassState(), { kind: "full" });
    const sts = file(name(1), "StatefulSet", name(1), "apps/v1");
    const original = readFileSync(sts, "utf8");
    writeFileSync(sts, original.replace(/replicas: 1\b/, "replicas: 5"));
    expect(readFileSync(sts, "utf8")).to.not.equal(original);
    const gone = file(name(4), "Service", name(4), "v1");
    const goneText = readFileSync(gone, "utf8");
    rmSync(gone);
    // An object vc did not render, carrying the cluster's inventory label: pruned.
    const extra = join(target.root, name(5), `vc-${name(5)}`, "configmap_stray.yaml");
    writeFileSync(
      extra,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n  namespace: vc-${name(5)}\n  labels:\n    ` +
        `vc.orch.io/inventory: ${name(5)}\ndata:\n  a: "1"\n`,
    );

    const expected = changesOf(await diffPlans());
    const res = await runPass(deps({ allowMassPrune: true }), newPassState(), { kind: "full" });
    expect(changesOf(plansOf(res.clusters))).to.deep.equal(expected);
    const counts = Object.fromEntries(res.clusters.map((c) => [c.cluster, c.sync!.counts]));
    expect(counts[name(1)]).to.include({ updated: 1, created: 0, deleted: 0 });
    expect(counts[name(4)]).to.include({ updated: 0, created: 1, deleted: 0 });
    expect(counts[name(5)]).to.include({ updated: 0, created: 0, deleted: 1 });
    expect(counts[name(0)]).to.include({ updated: 0, created: 0, deleted: 0 });
    expect(readFileSync(sts, "utf8")).to.equal(original);
    expect(readFileSync(gone, "utf8")).to.equal(goneText);
    expect(existsSync(extra)).to.equal(false);
  });

  it("prunes a cluster whose folder is gone, naming its host namespace from its objects", async () => {
    await runPass(deps(), newPassState(), { kind: "full" });
    rmSync(join(repo, "clusters", name(2)), { recursive: true });
    const res = await runPass(deps({ allowMassPrune: true }), newPassState(), { kind: "full" });
    const removed = res.clusters.find((c) => c.cluster === name(2))!;
    expect(removed.result).to.equal("deleted");
    expect(removed.hostNamespace).to.equal(`vc-${name(2)}`);
    expect(existsSync(join(target.root, name(2), `vc-${name(2)}`))).to.equal(false);
  });
});
