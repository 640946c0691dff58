// Changes before chores (issue #35): during the start-up pass, a commit in a git checkout or a file written in a plain
// folder that touches the cluster the pass reaches last is reconciled before the pass's next chunk, and the pass then
// skips it; on a dir: target and on the in-memory API server, whatever the chunk size or the shard.
import { expect } from "chai";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/host/client.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import type { WatchMode } from "../../src/reconciler/source.js";
import { changesFirst, changesFirstProblems } from "../support/changes-first.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const MODES: Array<WatchMode | "remote"> = ["git", "top", "files", "remote"];

describe("reconciler: changes before chores during the start-up pass", function () {
  this.timeout(120_000);

  describe("dir: target", () => {
    let tmp: string;
    beforeEach(() => (tmp = mkdtempSync(join(tmpdir(), "vc-changes-first-out-"))));
    afterEach(() => rmSync(tmp, { recursive: true, force: true }));

    /** The StatefulSet manifest of a cluster in the target folder. */
    const statefulSet = (cluster: string): string => {
      const dir = join(tmp, cluster);
      const file = readdirSync(dir, { recursive: true, withFileTypes: true }).find(
        (e) => e.isFile() && e.name.startsWith("statefulset.apps_"),
      )!;
      return readFileSync(join(file.parentPath, file.name), "utf8");
    };

    for (const mode of MODES)
      it(`${mode}: the change is applied before the pass's next chunk, and the pass skips it`, async () => {
        const target = new DirTarget(tmp);
        const run = await changesFirst({
          mode,
          context: { target, store: target.statusStore(), allowMassPrune: false, mayWrite: () => true },
        });
        expect(changesFirstProblems(run)).to.deep.equal([]);
        expect(statefulSet(run.changed)).to.include(`cpu: ${run.cpu}`);
        expect(run.passes).to.deep.equal(["incremental", "full"]);
        // Noticed before the chunk's first cluster started: it does not wait for the chunk's end either.
        const order = run.events.map((e) => e.cluster);
        expect(order.indexOf(run.changed)).to.be.lessThan(order.indexOf(run.chunks[1]![0]!));
      });

    it("a change to a cluster of the chunk in hand, not yet run, is applied, not what was loaded", async () => {
      const target = new DirTarget(tmp);
      let made = false;
      const run = await changesFirst({
        mode: "top",
        chunkSize: 4,
        clusters: 12,
        at: 0,
        which: "same",
        context: { target, store: target.statusStore(), allowMassPrune: false, mayWrite: () => true },
        during: async (cluster, chunks, change) => {
          if (made || cluster !== chunks[0]![1]) return;
          made = true;
          await change();
        },
      });
      const chunk = run.chunks[0]!;
      expect(run.changed).to.equal(chunk[2]);
      expect(run.events.map((e) => e.cluster).slice(0, 4)).to.deep.equal(chunk);
      expect(changesFirstProblems(run, 0)).to.deep.equal([]);
      expect(statefulSet(run.changed)).to.include(`cpu: ${run.cpu}`);
    });

    it("a change noticed in the middle of a chunk runs once the clusters in hand are done", async () => {
      const target = new DirTarget(tmp);
      let made = false;
      const run = await changesFirst({
        mode: "top",
        chunkSize: 4,
        clusters: 12,
        at: 0,
        context: { target, store: target.statusStore(), allowMassPrune: false, mayWrite: () => true },
        // The chunk's second cluster is in hand when the change lands (held until the watcher has told the loop).
        during: async (cluster, chunks, change) => {
          if (made || cluster !== chunks[0]![1]) return;
          made = true;
          await change();
        },
      });
      const order = run.events.map((e) => e.cluster);
      const chunk = run.chunks[0]!;
      // The first two of the chunk, then the change, then the rest of the chunk.
      expect(order.slice(0, 5)).to.deep.equal([chunk[0], chunk[1], run.changed, chunk[2], chunk[3]]);
      expect(changesFirstProblems(run, 0)).to.deep.equal([]);
    });

    for (const mode of ["top", "git"] as const)
      it(`${mode}: a change to a cluster of the chunk loaded ahead is applied, not its older content`, async () => {
        const target = new DirTarget(tmp);
        const run = await changesFirst({
          mode,
          which: "ahead",
          chunkSize: 3,
          context: { target, store: target.statusStore(), allowMassPrune: false, mayWrite: () => true },
        });
        expect(changesFirstProblems(run)).to.deep.equal([]);
        expect(statefulSet(run.changed)).to.include(`cpu: ${run.cpu}`);
      });

    for (const [chunkSize, at, shard] of [
      [1, 2, undefined],
      [3, 0, undefined],
      [1, 1, { index: 1, count: 2 }],
    ] as const)
      it(`git: chunks of ${chunkSize}, a change during chunk ${at}${shard ? ", shard 1/2" : ""}`, async () => {
        const target = new DirTarget(tmp);
        const run = await changesFirst({
          mode: "git",
          chunkSize,
          at,
          clusters: 12,
          ...(shard ? { shard } : {}),
          context: { target, store: target.statusStore(), allowMassPrune: false, mayWrite: () => true },
        });
        expect(changesFirstProblems(run, at)).to.deep.equal([]);
      });
  });

  describe("the in-memory API server", () => {
    let kube: KubeServer;
    let client: KubeClient;
    beforeEach(async () => {
      kube = await startKubeServer();
      client = KubeClient.open({ kubeconfig: kube.kubeconfigPath, context: "test" });
    });
    afterEach(async () => {
      client.close();
      await kube.close();
    });

    for (const mode of MODES)
      it(`${mode}: the change is applied before the pass's next chunk, and the pass skips it`, async () => {
        const target = new KubeTarget(client);
        const run = await changesFirst({
          mode,
          context: {
            target,
            store: new KubeStatusStore(client, { source: target.source, records: target.records }),
            allowMassPrune: false,
            mayWrite: () => true,
          },
        });
        expect(changesFirstProblems(run)).to.deep.equal([]);
        const sts = kube.get("apps/v1", "StatefulSet", `vc-${run.changed}`, run.changed) as unknown as {
          spec: { template: { spec: { containers: Array<{ resources?: { requests?: { cpu?: string } } }> } } };
        };
        expect(sts.spec.template.spec.containers.map((c) => c.resources?.requests?.cpu)).to.include(run.cpu);
      });
  });
});
