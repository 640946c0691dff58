// The validation cache and the worker pool give exactly the results of a plain run; a change re-validates only its
// cluster.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateFleet } from "../../bench/fleet.js";
import { runValidate, type Output } from "../../src/cli/validate.js";
import { CACHE_MAX_AGE_MS, pruneCache } from "../../src/validate/cache.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { largestFirst, validateFolders } from "../../src/validate/pool.js";
import { listClusterFiles } from "../../src/repo/layout.js";
import { cleanupRepos, makeRepo, MESH_ON, VS } from "./fixture.js";

/** A small repository with errors and warnings of several kinds, and two clusters sharing a namespace. */
const MIXED = {
  "clusters/a/values.yaml": "integrations:\n  mesh:\n    enabeld: true\n",
  "clusters/a/notes.txt": "hi\n",
  "clusters/b/values.yaml": MESH_ON,
  "clusters/b/mesh/vs.yaml": `${VS("reviews")}---\n${VS("ratings")}  extraField: 1\n`,
  "clusters/c/values.yaml": "{}\n",
  "clusters/c/cluster.yaml": "# shared\nnamespace: shared\n",
  "clusters/d/values.yaml": "{}\n",
  "clusters/d/cluster.yaml": "namespace: shared\n",
  "clusters/e/values.yaml": MESH_ON,
  "clusters/e/mesh/loop.yaml": "kind: VirtualService\nspec: &x\n  again: *x\n",
};

const tmp: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "vc-cache-"));
  tmp.push(d);
  return d;
}

function entries(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(".vcv"))
    .sort();
}

describe("validate: cache and worker pool", function () {
  this.timeout(60_000);
  after(() => {
    cleanupRepos();
    for (const d of tmp.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("a warm run gives the same clusters, specs and located diagnostics as a run without cache", async () => {
    const root = makeRepo(MIXED);
    const cacheDir = join(tempDir(), "cache");
    const plain = await loadAndValidate(root, { jobs: 1 });
    const cold = await loadAndValidate(root, { jobs: 1, cacheDir });
    expect(entries(cacheDir)).to.have.length(5);
    const warm = await loadAndValidate(root, { jobs: 1, cacheDir });
    for (const r of [cold, warm]) {
      expect(r.diagnostics).to.deep.equal(plain.diagnostics);
      expect(r.clusters).to.deep.equal(plain.clusters);
    }
    // The namespace conflict is found across clusters, located in cluster.yaml, from cached results too.
    expect(
      warm.diagnostics.filter((d) => d.code === "namespace-conflict").map((d) => `${d.file}:${d.line}:${d.col}`),
    ).to.deep.equal(["clusters/c/cluster.yaml:2:1", "clusters/d/cluster.yaml:1:1"]);
    expect(plain.diagnostics.some((d) => d.code === "yaml-alias-cycle")).to.equal(true);
  });

  it("a change to one cluster's file re-validates that cluster only, and its new result is used", async () => {
    const dir = tempDir();
    await generateFleet(dir, { clusters: 6, meshPerCluster: 4 });
    const cacheDir = join(dir, "cache");
    await loadAndValidate(dir, { jobs: 1, cacheDir });
    const before = entries(cacheDir);
    expect(before).to.have.length(6);
    writeFileSync(
      join(dir, "clusters", "search-0001", "values.yaml"),
      "controlPlane: {statefulSet: {resources: {requests: {cpu: lots}}}}\n",
    );
    const r = await loadAndValidate(dir, { jobs: 1, cacheDir });
    const added = entries(cacheDir).filter((n) => !before.includes(n));
    expect(added).to.have.length(1);
    expect(r.clusters.filter((c) => !c.valid).map((c) => c.name)).to.deep.equal(["search-0001"]);
  });

  it("an unreadable or corrupt entry is validated again, not trusted", async () => {
    const root = makeRepo({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/vs.yaml": VS("reviews") });
    const cacheDir = join(tempDir(), "cache");
    const first = await loadAndValidate(root, { cacheDir });
    for (const n of entries(cacheDir)) writeFileSync(join(cacheDir, n), "not a v8 value");
    const again = await loadAndValidate(root, { cacheDir });
    expect(again.clusters).to.deep.equal(first.clusters);
    expect(again.clusters[0]!.spec!.mesh).to.have.length(1);
  });

  it("prunes entries unused for a day, keeps the others", async () => {
    const root = makeRepo({ "clusters/a/values.yaml": "{}\n", "clusters/b/values.yaml": "{}\n" });
    const cacheDir = join(tempDir(), "cache");
    await loadAndValidate(root, { cacheDir });
    const [old, kept] = entries(cacheDir);
    const past = new Date(Date.now() - CACHE_MAX_AGE_MS - 60_000);
    utimesSync(join(cacheDir, old!), past, past);
    expect(pruneCache(cacheDir, CACHE_MAX_AGE_MS, Date.now() + 2 * 3600_000)).to.equal(1);
    expect(readdirSync(cacheDir).sort()).to.deep.equal([kept!, "vc-cache.key"]);
  });

  it("workers give the results of one thread, in order", async () => {
    const dir = tempDir();
    await generateFleet(dir, { clusters: 18, meshPerCluster: 1, style: "flow" });
    writeFileSync(join(dir, "clusters", "payments-0008", "values.yaml"), "controlPlane: {unknownKey: 1}\n");
    const one = await loadAndValidate(dir, { jobs: 1 });
    const two = await loadAndValidate(dir, { jobs: 2 });
    expect(two.clusters).to.deep.equal(one.clusters);
    expect(two.diagnostics).to.deep.equal(one.diagnostics);
    expect(one.diagnostics.map((d) => `${d.file}:${d.line}:${d.col}`)).to.deep.equal([
      "clusters/payments-0008/values.yaml:1:16",
    ]);
    // Summary results carry no spec; the direct pool call keeps the order of the names it was given.
    const names = one.clusters.map((c) => c.name).reverse();
    const summary = await validateFolders(dir, names, { jobs: 2, detail: "summary", workers: "always" });
    expect(summary.byWorkers, "every folder went to the worker").to.equal(names.length);
    expect(summary.results.map((c) => c.name)).to.deep.equal(names);
    expect(summary.results.every((c) => c.spec === undefined && c.values === undefined)).to.equal(true);
  });

  it(
    "starts workers only for large runs, and with a cache only once folders miss it (a warm run " + "starts none)",
    async () => {
      const dir = tempDir();
      await generateFleet(dir, { clusters: 30, meshPerCluster: 1, style: "flow" });
      const names = readdirSync(join(dir, "clusters")).sort();
      expect(
        (await validateFolders(dir, names, { jobs: 2, detail: "summary" })).workers,
        "under MIN_FILES_FOR_WORKERS",
      ).to.equal(0);
      expect(
        (await validateFolders(dir, names, { jobs: 2, detail: "summary", minFiles: 1 })).workers,
        "no cache: at once",
      ).to.equal(1);
      const cacheDir = join(tempDir(), "cache");
      const cold = await validateFolders(dir, names, { jobs: 2, detail: "summary", cacheDir, minFiles: 1 });
      expect(cold.workers, "a cold cache: once folders missed it").to.equal(1);
      const warm = await validateFolders(dir, names, { jobs: 2, detail: "summary", cacheDir, minFiles: 1 });
      expect(warm.workers, "every folder was in the cache").to.equal(0);
      expect(warm.results).to.deep.equal(cold.results);
    },
  );

  it("hands out the largest folders first", () => {
    const dir = tempDir();
    for (const [name, bytes] of [
      ["small", 10],
      ["large", 5000],
      ["middle", 300],
    ] as const) {
      mkdirSync(join(dir, "clusters", name, "mesh"), { recursive: true });
      writeFileSync(join(dir, "clusters", name, "values.yaml"), "# values\n");
      writeFileSync(join(dir, "clusters", name, "mesh", "a.yaml"), `# ${"x".repeat(bytes)}\n`);
    }
    const order = largestFirst(
      dir,
      ["small", "large", "middle"].map((name) => ({ name, files: listClusterFiles(dir, name), bytes: 0 })),
    );
    expect(order.map((f) => f.name)).to.deep.equal(["large", "middle", "small"]);
    expect(order.every((f) => f.files !== undefined)).to.equal(true);
  });

  it("vc validate --cache-dir prints the same report cold and warm", async () => {
    const root = makeRepo(MIXED);
    const cacheDir = join(tempDir(), "ci-cache");
    const run = async (): Promise<{ code: number; out: string; err: string }> => {
      const c: Output & { out: string; err: string } = {
        out: "",
        err: "",
        stdout: (t) => void (c.out += t),
        stderr: (t) => void (c.err += t),
      };
      const code = await runValidate(root, { format: "text", cluster: [], cacheDir }, c);
      return { code, out: c.out, err: c.err };
    };
    const plain = await runValidate(root, { format: "text", cluster: [] }, { stdout: () => {}, stderr: () => {} });
    const cold = await run();
    const warm = await run();
    expect(cold.code).to.equal(1);
    expect(plain).to.equal(1);
    expect(warm).to.deep.equal(cold);
    expect(cold.out).to.contain(
      "clusters/e/mesh/loop.yaml:3:10: error: a YAML alias refers to the collection that contains it",
    );
  });
});
