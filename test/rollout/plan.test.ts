// The wave planner: selectors, cumulative percentages in a stable order, the remainder, and settings defaults.
import { expect } from "chai";
import { planWaves, stableKey, type Member } from "../../src/rollout/plan.js";
import { rolloutSettings } from "../../src/model/rollout-file.js";
import { selects, unavailableBudget } from "../../src/rollout/model.js";

const fleet = (n: number, canary: string[] = []): Member[] =>
  Array.from({ length: n }, (_, i) => `c${String(i).padStart(3, "0")}`).map((name) => ({
    name,
    labels: (canary.includes(name) ? { canary: "true" } : { tier: "prod" }) as Record<string, string>,
  }));

describe("rollout: wave planner", () => {
  const settings = rolloutSettings({
    waves: [
      { name: "canary", selector: { matchLabels: { canary: "true" } } },
      { name: "early", percent: 10 },
      { name: "rest" },
    ],
  });

  it("puts selected clusters first, a cumulative percentage next, and every cluster left last", () => {
    const waves = planWaves(settings, fleet(100, ["c007", "c042"]));
    expect(waves.map((w) => w.name)).to.deep.equal(["canary", "early", "rest"]);
    expect(waves[0]!.clusters).to.deep.equal(["c007", "c042"]);
    // 10 % of 100 is reached by the end of "early": 2 canaries + 8.
    expect(waves[1]!.clusters).to.have.length(8);
    expect(waves[2]!.clusters).to.have.length(90);
    const all = waves.flatMap((w) => w.clusters);
    expect(new Set(all).size).to.equal(100);
  });

  it(
    "picks the same clusters for a percentage whatever the input order (sha256 of the name), and sorts " + "each wave",
    () => {
      const members = fleet(50);
      const a = planWaves(settings, members);
      const b = planWaves(settings, [...members].reverse());
      expect(b).to.deep.equal(a);
      const expected = members
        .map((m) => m.name)
        .sort((x, y) => (stableKey(x) < stableKey(y) ? -1 : 1))
        .slice(0, 5)
        .sort();
      expect(a[1]!.clusters).to.deep.equal(expected);
      // A re-plan with one more cluster keeps the earlier picks unless the new one sorts before them.
      const grown = planWaves(settings, [...members, { name: "zz-new", labels: {} }]);
      expect(
        grown[1]!.clusters
          .filter((c) => c !== "zz-new")
          .every((c) => a[1]!.clusters.includes(c) || a[2]!.clusters.includes(c)),
      ).to.equal(true);
    },
  );

  it(
    "rounds a percentage up, never moving more than it allows, and puts clusters left after the last wave " + "into it",
    () => {
      const s = rolloutSettings({
        waves: [
          { name: "one", percent: 34 },
          { name: "two", percent: 67 },
        ],
      });
      const waves = planWaves(s, fleet(3));
      expect(waves.map((w) => w.clusters.length)).to.deep.equal([2, 1]);
      const four = planWaves(
        rolloutSettings({
          waves: [
            { name: "one", percent: 25 },
            { name: "two", percent: 50 },
          ],
        }),
        fleet(4),
      );
      expect(four.map((w) => w.clusters.length)).to.deep.equal([1, 3]);
    },
  );

  it("narrows a percentage by its selector and gives an empty wave when nothing matches", () => {
    const s = rolloutSettings({
      waves: [
        { name: "none", selector: { matchLabels: { region: "mars" } } },
        {
          name: "prod-half",
          selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["prod"] }] },
          percent: 50,
        },
        { name: "rest" },
      ],
    });
    const waves = planWaves(s, fleet(10, ["c000", "c001"]));
    expect(waves[0]!.clusters).to.deep.equal([]);
    expect(waves[1]!.clusters).to.have.length(5);
    expect(waves[1]!.clusters).to.not.include("c000");
    expect(waves[2]!.clusters).to.have.length(5);
  });

  it("matches label selectors as Kubernetes does", () => {
    expect(selects({ matchLabels: { a: "1" } }, { a: "1", b: "2" })).to.equal(true);
    expect(selects({ matchLabels: { a: "1" } }, { a: "2" })).to.equal(false);
    expect(selects({ matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] }, {})).to.equal(true);
    expect(selects({ matchExpressions: [{ key: "a", operator: "Exists" }] }, {})).to.equal(false);
    expect(selects({ matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, { a: "" })).to.equal(false);
    expect(selects({ matchExpressions: [{ key: "a", operator: "In", values: ["x"] }] }, {})).to.equal(false);
  });

  it("resolves defaults and per-wave overrides, and a maxUnavailable share rounds down to at least one", () => {
    const s = rolloutSettings({
      waves: [{ name: "a" }, { name: "b", pause: "manual", healthGate: { timeout: "1m" } }],
      pause: "2m",
    });
    expect(s.waves[0]).to.deep.include({ pause: 120_000, gateTimeoutMs: 600_000 });
    expect(s.waves[1]).to.deep.include({ pause: "manual", gateTimeoutMs: 60_000 });
    expect(s.onFailure).to.equal("halt");
    expect(s.maxUnavailable).to.equal(1);
    expect(unavailableBudget("25%", 10)).to.equal(2);
    expect(unavailableBudget("25%", 3)).to.equal(1);
    expect(unavailableBudget(3, 10)).to.equal(3);
  });
});
