// The dir: target at fleet scale: cluster names from the folder listing, unchanged files left alone, folders made
// once and still never through a symlink, an emptied cluster folder removed.
import { expect } from "chai";
import { mkdtemp, mkdir, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirTarget } from "../../src/sinks/dir.js";
import { syncCluster } from "../../src/pipeline/cluster.js";
import { clusterObjects } from "../plan/fixtures.js";

describe("sinks/dir: I/O at scale", () => {
  let dir: string;
  let target: DirTarget;
  const sync = (t: DirTarget, cluster: string, desired = clusterObjects(cluster), prune = true) =>
    syncCluster(
      t,
      { cluster, hostNamespace: `vc-${cluster}`, desired },
      { prune, dryRun: false, allowMassPrune: true },
    );

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "vc-dir-io-"));
    target = new DirTarget(join(dir, "out"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("names the clusters on the target from the folder listing, without reading a manifest", async () => {
    await sync(target, "a");
    // A manifest no parser could read: a full pass learning the names must not need it.
    await mkdir(join(dir, "out", "b", "vc-b"), { recursive: true });
    await writeFile(join(dir, "out", "b", "vc-b", "configmap_x.yaml"), "kind: [unclosed\n");
    // An empty folder is no cluster.
    await mkdir(join(dir, "out", "c"));
    expect(await target.clusterNames()).to.deep.equal(["a", "b"]);
    expect(await target.listClusterNames()).to.deep.equal(["a", "b"]);
  });

  it("still refuses a symlink at the top of the target folder when listing names", async () => {
    await mkdir(join(dir, "out"), { recursive: true });
    await mkdir(join(dir, "elsewhere"));
    await symlink(join(dir, "elsewhere"), join(dir, "out", "x"));
    let err: Error | undefined;
    await target.listClusterNames().catch((e: Error) => (err = e));
    expect(err?.message).to.match(/a symlink in the target folder: refused, not followed/);
  });

  it("leaves a file holding the same bytes alone (no rewrite), and rewrites one that differs", async () => {
    await sync(target, "a");
    const file = join(dir, "out", "a", "vc-a", "configmap_a-config.yaml");
    const before = await stat(file);
    const objs = clusterObjects("a");
    // Written again through apply (as a recreate or a forced update would): same content, same inode.
    for (const o of objs) await target.apply(o, { dryRun: false });
    expect((await stat(file)).ino).to.equal(before.ino);
    const changed = objs.map((o) => (o.kind === "ConfigMap" ? { ...o, data: { a: "2" } } : o));
    for (const o of changed) await target.apply(o, { dryRun: false });
    expect((await stat(file)).ino).to.not.equal(before.ino);
  });

  it("refuses to write through a namespace folder replaced by a symlink, and writes nothing outside", async () => {
    await sync(target, "a");
    const fresh = new DirTarget(join(dir, "out"));
    await rm(join(dir, "out", "a", "vc-a"), { recursive: true });
    await mkdir(join(dir, "outside"));
    await symlink(join(dir, "outside"), join(dir, "out", "a", "vc-a"));
    let err: Error | undefined;
    for (const o of clusterObjects("a").filter((o) => o.metadata.namespace))
      await fresh.apply(o, { dryRun: false }).catch((e: Error) => (err ??= e));
    expect(err?.message).to.match(/leads outside the target folder/);
    expect(await readdir(join(dir, "outside"))).to.deep.equal([]);
  });

  it(
    "a folder made once is checked again after the cluster's folder is walked: a symlink planted since is " + "refused",
    async () => {
      await sync(target, "a");
      await rm(join(dir, "out", "a", "vc-a"), { recursive: true });
      await mkdir(join(dir, "outside"));
      await symlink(join(dir, "outside"), join(dir, "out", "a", "vc-a"));
      let err: Error | undefined;
      await target.listInventory("a").catch((e: Error) => (err = e));
      expect(err?.message).to.match(/a symlink in the target folder: refused, not followed/);
      const ns = clusterObjects("a").find((o) => o.metadata.namespace)!;
      await target.apply(ns, { dryRun: false }).catch((e: Error) => (err = e));
      expect(err?.message).to.match(/leads outside the target folder/);
      expect(await readdir(join(dir, "outside"))).to.deep.equal([]);
    },
  );

  it(
    "removes a cluster's folder once its last object is gone (prune keeps the Namespace; deleting it by hand " +
      "empties the folder)",
    async () => {
      await sync(target, "a");
      await sync(target, "b");
      await sync(target, "a", []);
      expect(await readdir(join(dir, "out", "a"))).to.deep.equal(["_cluster"]);
      const [ns] = await target.listInventory("a");
      expect(await target.delete(ns!, "a", { dryRun: false })).to.equal("deleted");
      expect(existsSync(join(dir, "out", "a"))).to.equal(false);
      expect(await target.listClusterNames()).to.deep.equal(["b"]);
    },
  );
});
