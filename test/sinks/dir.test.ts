import { expect } from "chai";
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirTarget, manifestPath } from "../../src/sinks/dir.js";
import { openTarget, TargetSpecError } from "../../src/sinks/index.js";
import { syncCluster } from "../../src/pipeline/cluster.js";
import { LABELS } from "../../src/translate/keys.js";
import { clusterObjects } from "../plan/fixtures.js";

describe("sinks/dir", () => {
  let dir: string;
  let target: DirTarget;
  const sync = (
    cluster: string,
    desired = clusterObjects(cluster),
    opts: Partial<{ prune: boolean; dryRun: boolean; allowMassPrune: boolean }> = {},
  ) =>
    syncCluster(
      target,
      { cluster, hostNamespace: `vc-${cluster}`, desired },
      { prune: true, dryRun: false, allowMassPrune: false, ...opts },
    );

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "vc-dir-"));
    target = new DirTarget(join(dir, "out"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("writes one file per object, by cluster, namespace, kind and name", async () => {
    const result = await sync("a");
    expect(result.counts.created).to.equal(6);
    expect((await readdir(join(dir, "out", "a"))).sort()).to.deep.equal(["_cluster", "vc-a"]);
    expect((await readdir(join(dir, "out", "a", "vc-a"))).sort()).to.deep.equal([
      "configmap_a-config.yaml",
      "secret_a-db.yaml",
      "serviceaccount_vc-a.yaml",
      "statefulset.apps_a.yaml",
      "virtualservice.networking.mesh.io_r-x-default-x-a.yaml",
    ]);
    const text = await readFile(join(dir, "out", "a", "vc-a", "configmap_a-config.yaml"), "utf8");
    expect(text).to.match(/^apiVersion: v1\ndata:\n {2}a: '1'\nkind: ConfigMap\n/);
  });

  it(
    "reads its files back: a second run is a no-op, a change is one update, prune deletes files it " + "owns only",
    async () => {
      await sync("a");
      await sync("b");
      expect((await sync("a")).counts.unchanged).to.equal(6);
      const next = clusterObjects("a").filter((o) => o.kind !== "VirtualService");
      next.find((o) => o.kind === "ConfigMap")!.data = { a: "2" };
      const foreign = join(dir, "out", "a", "vc-a", "notes.yaml");
      await writeFile(foreign, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: notes\n");
      const result = await sync("a", next);
      expect(result.counts).to.include({ updated: 1, deleted: 1, unchanged: 4 });
      expect(await readFile(foreign, "utf8")).to.include("notes");
      expect((await target.listFleetInventory()).get("b")).to.have.length(6);
    },
  );

  it("never deletes a file whose object lacks the cluster's inventory label", async () => {
    await sync("a");
    const [live] = (await target.listInventory("a")).filter((o) => o.kind === "ConfigMap");
    const file = join(
      dir,
      "out",
      manifestPath("a", { apiVersion: "v1", kind: "ConfigMap", namespace: "vc-a", name: "a-config" }),
    );
    await writeFile(file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-config\n  namespace: vc-a\n");
    expect(await target.delete(live!, "a", { dryRun: false })).to.equal("not-owned");
    expect(await readFile(file, "utf8")).to.include("a-config");
  });

  it("a dry run writes nothing", async () => {
    const result = await sync("a", clusterObjects("a"), { dryRun: true });
    expect(result.counts.created).to.equal(6);
    expect(await target.listFleetInventory()).to.have.property("size", 0);
  });

  it("says a manifest cut in half is unreadable and replaced, instead of a silent create", async () => {
    await sync("a");
    const file = join(dir, "out", "a", "vc-a", "statefulset.apps_a.yaml");
    const text = await readFile(file, "utf8");
    // Cut at a line boundary before its labels: still YAML, no longer the whole object (a write cut short).
    const lines = text.split("\n");
    const cut = lines.findIndex((l) => l.trim() === "labels:");
    expect(cut).to.be.greaterThan(0);
    await writeFile(file, `${lines.slice(0, cut).join("\n")}\n`);
    const told: string[] = [];
    target.tell = (m) => told.push(m);
    const again = await sync("a");
    expect(told).to.have.length(1);
    expect(told[0]).to.match(/statefulset\.apps_a\.yaml: unreadable, not a whole manifest vc wrote \(cut short\?\)/);
    expect(told[0]).to.contain("replaced by what the repository renders");
    expect(again.counts.created).to.equal(1);
    expect(await readFile(file, "utf8")).to.equal(text);
    told.length = 0;
    expect((await sync("a")).counts.unchanged).to.equal(6);
    expect(told).to.deep.equal([]);
  });

  it("refuses names that are not safe file names, and unreadable YAML with the file's name", async () => {
    const bad = clusterObjects("a")[4]!;
    expect(() =>
      manifestPath("a", { ...bad.metadata, apiVersion: "v1", kind: "ConfigMap", name: "../../etc" }),
    ).to.throw(/not a DNS-1123 name/);
    await mkdir(join(dir, "out", "a", "vc-a"), { recursive: true });
    await writeFile(join(dir, "out", "a", "vc-a", "broken.yaml"), "a: [\n");
    try {
      await target.listInventory("a");
      expect.fail("should have thrown");
    } catch (err) {
      expect((err as Error).message).to.match(/broken\.yaml:\d+:\d+: /);
    }
    const unlabelled = { ...bad, metadata: { ...bad.metadata, labels: {} } };
    try {
      await target.apply(unlabelled, { dryRun: false });
      expect.fail("should have thrown");
    } catch (err) {
      expect((err as Error).message).to.include(`lacks the label ${LABELS.inventory}`);
    }
  });

  it("opens targets from their spec and refuses unknown ones", async () => {
    expect((await openTarget("dir:some/where")).description).to.equal("dir:some/where");
    for (const spec of ["dir:", "kubernetes", "file:x"]) {
      try {
        await openTarget(spec);
        expect.fail(`should refuse ${spec}`);
      } catch (err) {
        expect(err).to.be.instanceOf(TargetSpecError);
      }
    }
  });
});
