// `vc diff` of a whole fleet, streamed a chunk at a time (planFleet, chunks of 2), gives the report of planning the
// fleet as one chunk: drift, a removed cluster, an invalid one, a namespace claimed across chunks.
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { applyFleet, planFleet } from "../../src/pipeline/fleet.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { DiffSpill } from "../../src/plan/spill.js";
import { runVc } from "../support/vc.js";

describe("pipeline/fleet: a streamed diff", function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  let target: DirTarget;
  const REV = "0123456789abcdef0123456789abcdef01234567";
  const sorted = Array.from({ length: 9 }, (_, i) => fleetClusterName(i)).sort();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-fleet-stream-"));
    repo = join(tmp, "repo");
    target = new DirTarget(join(tmp, "out"));
    await generateFleet(repo, { clusters: 9, meshPerCluster: 1 });
    await applyFleet(target, await loadDesiredIndex(repo, REV), { prune: true, allowMassPrune: false, dryRun: false });
    // Drift in one cluster, one folder removed, one invalid, and the first and last (in name order) claiming one
    // namespace.
    writeFileSync(
      join(repo, "clusters", sorted[3]!, "values.yaml"),
      (await import("node:fs"))
        .readFileSync(join(repo, "clusters", sorted[3]!, "values.yaml"), "utf8")
        .replace(/cpu: \d+m/, "cpu: 999m"),
    );
    rmSync(join(repo, "clusters", sorted[5]!), { recursive: true });
    writeFileSync(join(repo, "clusters", sorted[6]!, "values.yaml"), "controlPlane: [not, a, mapping]\n");
    writeFileSync(join(repo, "clusters", sorted[8]!, "cluster.yaml"), `namespace: vc-${sorted[0]}\n`);
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const prune of [false, true]) {
    it(`plans chunk by chunk what planning the fleet at once plans${prune ? " (--prune)" : ""}`, async () => {
      const opts = { prune, allowMassPrune: true, selected: [] };
      const whole = await planFleet(target, await loadDesiredIndex(repo, REV), opts, {
        chunkSize: Number.MAX_SAFE_INTEGER,
      });
      const streamed = await planFleet(target, await loadDesiredIndex(repo, REV), opts, { chunkSize: 2 });
      expect(formatPlanReport(streamed, "json")).to.equal(formatPlanReport(whole, "json"));
      expect(streamed.plans.map((p) => p.cluster)).to.include(sorted[3]);
      expect(streamed.plans.some((p) => p.cluster === sorted[5])).to.equal(prune);
      expect(streamed.errors.map((e) => e.cluster).sort()).to.deep.equal([sorted[0], sorted[6], sorted[8]].sort());
    });
  }

  it("keeps the diffs past its memory bound in a file and prints the same report", async () => {
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    // Every cluster of a first diff into an empty folder is all creates: each object's YAML is a diff.
    const empty = new DirTarget(join(tmp, "empty"));
    const held = await planFleet(empty, await loadDesiredIndex(repo, REV), opts, { chunkSize: 2 });
    const spill = new DiffSpill(4096);
    try {
      const spilled = await planFleet(empty, await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, spill });
      expect(spill.bytes.memory).to.be.at.most(4096);
      expect(spill.bytes.file).to.be.greaterThan(10 * 4096);
      for (const format of ["json", "text", "markdown", "yaml"] as const)
        expect(formatPlanReport(spilled, format), format).to.equal(formatPlanReport(held, format));
    } finally {
      spill.close();
    }
  });

  it("vc diff of the whole fleet goes through it: the same text as a diff of the fleet at once", async () => {
    const res = await runVc(["diff", repo, "--target", `dir:${target.root}`, "--prune", "-o", "json"]);
    const whole = await planFleet(
      target,
      await loadDesiredIndex(repo, REV),
      { prune: true, allowMassPrune: false, selected: [] },
      { chunkSize: Number.MAX_SAFE_INTEGER },
    );
    expect(res.code).to.equal(1);
    const parsed = JSON.parse(res.stdout) as {
      clusters: Array<{ cluster: string }>;
      errors: Array<{ cluster: string }>;
    };
    expect(parsed.clusters.map((c) => c.cluster)).to.deep.equal(whole.plans.map((p) => p.cluster));
    expect(parsed.errors.map((e) => e.cluster)).to.deep.equal(whole.errors.map((e) => e.cluster));
  });
});
