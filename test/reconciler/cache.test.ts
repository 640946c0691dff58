// The reconciler keeps validated folders in its cache between passes: a commit touching one cluster parses one cluster.
import { expect } from "chai";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { cachingEngine } from "../../src/pipeline/engine.js";
import { Bed, name, newPassState, runPass } from "./harness.js";

describe("reconciler: validation cache between passes", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(4);
  });
  afterEach(() => bed.close());

  it("stores one entry per cluster, reuses them, and adds one for the one cluster a commit changed", async () => {
    const cacheDir = join(bed.tmp, "validated");
    const entries = (): string[] =>
      readdirSync(cacheDir)
        .filter((n) => n.endsWith(".vcv"))
        .sort();
    const deps = bed.deps({ engine: cachingEngine(cacheDir) });
    const state = newPassState();
    const first = await runPass(deps, state, { kind: "full" });
    expect(first.clusters.map((c) => c.result)).to.deep.equal(Array(4).fill("applied"));
    const before = entries();
    expect(before).to.have.length(4);

    // A full resync with nothing changed: the same entries, nothing applied.
    const again = await runPass(deps, state, { kind: "full" });
    expect(again.clusters.every((c) => c.sync?.counts.created === 0 && c.sync?.counts.updated === 0)).to.equal(true);
    expect(entries()).to.deep.equal(before);

    bed.edit(`clusters/${name(2)}/values.yaml`, /cpu: \d+m/, "cpu: 300m");
    bed.repo.commit("one cluster changes");
    const res = await runPass(deps, state, { kind: "incremental" });
    expect(res.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([[name(2), "applied"]]);
    expect(entries().filter((n) => !before.includes(n))).to.have.length(1);
    expect(JSON.stringify(bed.statefulSet(name(2)))).to.include("300m");
  });
});
