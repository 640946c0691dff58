// The start-up pass of a new reconciler (issue #35): each cluster's record keeps the digest of its folder's validation
// inputs and the summary it gave; a new reconciler's index takes a folder's summary from its record while the digest
// matches (no folder validated again), and still renders, plans and compares every cluster, so drift is corrected.
import { expect } from "chai";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { silentLogger } from "../../src/model/log.js";
import { defaultEngine, type Engine, type LoadedCluster } from "../../src/pipeline/engine.js";
import { newPassState, runPass, type PassDeps } from "../../src/reconciler/pass.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import type { Target } from "../../src/sinks/types.js";
import type { StatusStore } from "../../src/records/status-store.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const NAMES = Array.from({ length: 5 }, (_, i) => fleetClusterName(i)).sort();

describe("reconciler: a folder's validation kept on its record", function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  let kube: KubeServer | undefined;
  let client: KubeClient | undefined;
  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-validated-"));
    repo = join(tmp, "repo");
    await generateFleet(repo, { clusters: 5, meshPerCluster: 1 });
  });
  afterEach(async () => {
    client?.close();
    await kube?.close();
    kube = undefined;
    client = undefined;
    rmSync(tmp, { recursive: true, force: true });
  });

  /** Pass dependencies of a new reconciler (a new pod); `index` collects what its summary loads gave. */
  const deps = (target: Target, store: StatusStore, index: LoadedCluster[]): PassDeps => {
    const engine: Engine = {
      ...defaultEngine,
      load: async (root, opts) => {
        const res = await defaultEngine.load(root, opts);
        if (opts.detail === "summary") index.push(...res.clusters);
        return res;
      },
    };
    return {
      engine,
      target,
      store,
      allowMassPrune: false,
      mayWrite: () => true,
      source: new FolderSource(repo),
      logger: silentLogger,
      chunkSize: 2,
      keepPlans: true,
    };
  };

  const targets: Array<[string, () => Promise<{ target: Target; store: StatusStore }>]> = [
    [
      "a dir: target",
      async () => {
        const target = new DirTarget(join(tmp, "out"));
        return { target, store: target.statusStore() };
      },
    ],
    [
      "the in-memory API server",
      async () => {
        kube ??= await startKubeServer();
        client ??= KubeClient.open({ kubeconfig: kube.kubeconfigPath, context: "test" });
        const target = new KubeTarget(client);
        return { target, store: new KubeStatusStore(client, { source: target.source, records: target.records }) };
      },
    ],
  ];

  for (const [name, open] of targets)
    it(`${name}: a restart validates only a changed folder again, and writes nothing else`, async () => {
      const { target, store } = await open();
      const first: LoadedCluster[] = [];
      const applied = await runPass(deps(target, store, first), newPassState(), { kind: "full" });
      expect(applied.clusters.map((c) => c.result)).to.deep.equal(NAMES.map(() => "applied"));
      expect(first.filter((c) => c.recorded)).to.deep.equal([]);
      for (const n of NAMES) expect((await store.read(n, `vc-${n}`))!.validated!.digest).to.match(/^[0-9a-f]{64}$/);

      // A restart: no folder validated in the index, every cluster planned, nothing written.
      const second: LoadedCluster[] = [];
      const restart = await runPass(deps(target, store, second), newPassState(), { kind: "full" });
      expect(second.map((c) => [c.name, c.recorded])).to.deep.equal(NAMES.map((n) => [n, true]));
      expect(restart.clusters.map((c) => [c.cluster, c.result, c.statusWritten])).to.deep.equal(
        NAMES.map((n) => [n, "applied", false]),
      );

      // A folder changed while no reconciler ran: validated again, and its record keeps the new digest.
      const changed = NAMES[3]!;
      const before = (await store.read(changed, `vc-${changed}`))!.validated!.digest;
      const values = join(repo, "clusters", changed, "values.yaml");
      writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, "cpu: 321m"));
      const third: LoadedCluster[] = [];
      const next = await runPass(deps(target, store, third), newPassState(), { kind: "full" });
      expect(third.filter((c) => !c.recorded).map((c) => c.name)).to.deep.equal([changed]);
      expect(next.clusters.filter((c) => c.statusWritten).map((c) => c.cluster)).to.deep.equal([changed]);
      expect((await store.read(changed, `vc-${changed}`))!.validated!.digest).to.not.equal(before);
    });

  it("a dir: target: a record's summary of another namespace than its record's, or digest, is not taken", async () => {
    const target = new DirTarget(join(tmp, "out"));
    const store = target.statusStore();
    await runPass(deps(target, store, []), newPassState(), { kind: "full" });
    const [moved, other] = [NAMES[0]!, NAMES[1]!];
    const statusFile = (n: string) => join(tmp, "out", ".vc-status", `${n}.json`);
    const edit = (n: string, change: (v: { digest: string; settings: { namespace: string } }) => void) => {
      const status = JSON.parse(readFileSync(statusFile(n), "utf8"));
      change(status.validated);
      writeFileSync(statusFile(n), JSON.stringify(status));
    };
    edit(moved, (v) => (v.settings.namespace = "kube-system"));
    edit(other, (v) => (v.digest = "0".repeat(64)));
    const index: LoadedCluster[] = [];
    const res = await runPass(deps(target, store, index), newPassState(), { kind: "full" });
    expect(index.filter((c) => !c.recorded).map((c) => c.name)).to.deep.equal([moved, other]);
    expect(index.find((c) => c.name === moved)!.settings!.namespace).to.equal(`vc-${moved}`);
    expect(res.clusters.every((c) => c.result === "applied")).to.equal(true);
    // Recorded again as validation says.
    for (const n of [moved, other]) expect((await store.read(n))!.validated!.settings.namespace).to.equal(`vc-${n}`);
  });

  it("a dir: target: drift is still corrected by a restart whose index came from the records", async () => {
    const target = new DirTarget(join(tmp, "out"));
    const store = target.statusStore();
    await runPass(deps(target, store, []), newPassState(), { kind: "full" });
    // Someone edits a manifest on the target.
    const cluster = NAMES[1]!;
    const dir = join(tmp, "out", cluster);
    const sts = readdirSync(dir, { recursive: true, withFileTypes: true }).find(
      (e) => e.isFile() && e.name.startsWith("statefulset.apps_"),
    )!;
    const file = join(sts.parentPath, sts.name);
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace(/replicas: \d+/, "replicas: 7"));
    const index: LoadedCluster[] = [];
    const res = await runPass(deps(target, store, index), newPassState(), { kind: "full" });
    expect(index.every((c) => c.recorded)).to.equal(true);
    const run = res.clusters.find((c) => c.cluster === cluster)!;
    expect(run.sync!.counts.updated).to.equal(1);
    expect(readFileSync(file, "utf8")).to.equal(good);
  });
});
