// The reconciler isolates a cluster that fails to load: hostile YAML or a loader failure makes that cluster invalid,
// the others go on.
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultEngine } from "../../src/pipeline/engine.js";
import { MAX_FILE_BYTES } from "../../src/repo/read.js";
import { smallBomb } from "../validate/fixture.js";
import { Bed, name, newPassState, runPass } from "./harness.js";

describe("reconciler: one cluster's failure stays its own", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(4);
  });
  afterEach(() => bed.close());

  it(
    "a self-referencing alias and a file of thousands of small alias bombs make their clusters invalid; another " +
      "cluster's change applies",
    async () => {
      const deps = bed.deps();
      const state = newPassState();
      await runPass(deps, state, { kind: "full" });
      const good = bed.repo.head();
      writeFileSync(
        join(bed.repo.work, "clusters", name(1), "mesh", "loop.yaml"),
        "kind: VirtualService\nspec: &x\n  again: *x\n",
      );
      const count = Math.floor((MAX_FILE_BYTES - 1024) / (smallBomb(99_999).length + 4));
      writeFileSync(
        join(bed.repo.work, "clusters", name(2), "mesh", "bombs.yaml"),
        Array.from({ length: count }, (_, i) => smallBomb(i)).join("---\n"),
      );
      bed.edit(`clusters/${name(3)}/values.yaml`, /cpu: \d+m/, "cpu: 300m");
      bed.repo.commit("hostile YAML in two clusters, a change in a third");
      const res = await runPass(deps, state, { kind: "incremental" });
      const byName = Object.fromEntries(res.clusters.map((c) => [c.cluster, c]));
      expect(byName[name(1)]!.result).to.equal("invalid");
      expect(byName[name(1)]!.message).to.match(
        new RegExp(`clusters/${name(1)}/mesh/loop.yaml:3:10: a YAML alias refers to the collection that contains it`),
      );
      expect(byName[name(2)]!.result).to.equal("invalid");
      expect(byName[name(2)]!.message).to.match(
        new RegExp(`clusters/${name(2)}/mesh/bombs.yaml:\\d+:\\d+: YAML aliases in this file expand to more than`),
      );
      expect(byName[name(2)]!.message).to.include(`${good.slice(0, 12)} stays live`);
      expect(byName[name(3)]!.result).to.equal("applied");
      expect(JSON.stringify(bed.statefulSet(name(3)))).to.include("300m");
    },
  );

  it(
    "when loading throws for one cluster, that cluster alone is invalid with the error and the others are " + "applied",
    async () => {
      const bad = name(2);
      const deps = bed.deps({
        engine: {
          ...defaultEngine,
          load: (root, opts) => {
            if (!opts.clusters || opts.clusters.includes(bad)) throw new RangeError("Maximum call stack size exceeded");
            return defaultEngine.load(root, opts);
          },
        },
      });
      const res = await runPass(deps, newPassState(), { kind: "full" });
      expect(Object.fromEntries(res.clusters.map((c) => [c.cluster, c.result]))).to.deep.equal({
        [name(0)]: "applied",
        [name(1)]: "applied",
        [bad]: "invalid",
        [name(3)]: "applied",
      });
      expect(res.clusters.find((c) => c.cluster === bad)!.message).to.include(
        `clusters/${bad}: cannot load this cluster folder: Maximum call stack size exceeded`,
      );
      expect(res.problems).to.equal(1);
    },
  );
});
