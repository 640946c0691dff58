import { expect } from "chai";
import { compareQuantity, parseQuantity, parseResourceListQuantity, sameQuantity } from "../../src/kube/quantity.js";
import { buildPlan } from "../../src/plan/build.js";
import { asLive, clusterObjects } from "../plan/fixtures.js";

describe("kube/quantity", () => {
  const amount = (text: string) => {
    const q = parseQuantity(text);
    return q && `${q.mantissa}e${q.exponent}`;
  };

  it("reads every decimal and binary suffix and signed decimal exponents exactly", () => {
    expect(amount("500m")).to.equal("5e-1");
    expect(amount("1Gi")).to.equal(`${2 ** 30}e0`);
    expect(amount("1.5k")).to.equal("15e2");
    expect(amount("1e3")).to.equal("1e3");
    expect(amount("2E2")).to.equal("2e2");
    expect(amount("2E")).to.equal("2e18");
    expect(amount("1Ei")).to.equal(`${2n ** 60n}e0`);
    expect(amount("3n")).to.equal("3e-9");
    expect(amount("7u")).to.equal("7e-6");
    expect(amount("+4P")).to.equal("4e15");
    expect(amount("-1.5Ti")).to.equal(`${-(3n * 2n ** 39n)}e0`);
    expect(amount("1e-3")).to.equal("1e-3");
    expect(amount("5E+2")).to.equal("5e2");
    expect(amount("123456789012345678901234567890")).to.equal("12345678901234567890123456789e1");
    for (const bad of ["", "1x", "1 Gi", "abc", "1.2.3", "1ki", "1KI", "1e", "1Ei3", "1e3e", "1k3", "e-10", "1\t"])
      expect(parseQuantity(bad), bad).to.equal(undefined);
  });

  it(
    "keeps the server's quirks: digit-less numbers are 0, 10^-9 rounding away from zero, the binary cap, 32-bit " +
      "exponents",
    () => {
      for (const zero of ["m", "-", "+", "Ki", ".", "00", "1e4294967296".replace("1", "0")])
        expect(amount(zero), zero).to.equal("0e0");
      expect(amount("1.")).to.equal("1e0");
      expect(amount("0.0000000001")).to.equal("1e-9");
      expect(amount("-1.5n")).to.equal("-2e-9");
      expect(amount("16Ei")).to.equal(`${2n ** 63n - 1n}e0`);
      expect(amount("1e4294967296")).to.equal("1e0");
      expect(amount(" 5\u00a0")).to.equal("5e0");
    },
  );

  it("compares exactly, whatever the spelling and size: 1Ei is more than 64Gi", () => {
    const cmp = (a: string, b: string) => compareQuantity(parseQuantity(a)!, parseQuantity(b)!);
    expect(cmp("1Ei", "64Gi")).to.equal(1);
    expect(cmp("64Gi", "68719476736")).to.equal(0);
    expect(cmp("68719476737", "64Gi")).to.equal(1);
    expect(cmp("1e400", "9".repeat(400))).to.equal(1);
    expect(parseQuantity("9".repeat(1001)), "longer than MAX_QUANTITY_LENGTH: refused, never slow").to.equal(undefined);
    expect(cmp("-1e400", `-${"9".repeat(400)}`)).to.equal(-1);
    expect(cmp("0.1n", "1n")).to.equal(0);
    expect(cmp("1e-1000000000", "2n")).to.equal(-1);
    expect(parseResourceListQuantity("0.0004")).to.deep.equal(parseQuantity("1m"));
  });

  it("compares amounts, not spellings", () => {
    expect(sameQuantity("1000m", "1")).to.equal(true);
    expect(sameQuantity("1024Mi", "1Gi")).to.equal(true);
    expect(sameQuantity("100m", "0.1")).to.equal(true);
    expect(sameQuantity("1000m", "2")).to.equal(false);
    expect(sameQuantity("1Gi", "1G")).to.equal(false);
    expect(sameQuantity("x", "x")).to.equal(false);
  });

  it("finds no change when the server stored resources and quota in canonical form, and a real change still", () => {
    const desired = clusterObjects("a");
    const sts = desired.find((o) => o.kind === "StatefulSet")!;
    (sts.spec as any).template.spec.containers[0].resources = {
      limits: { cpu: "1000m", memory: "2048Mi" },
      requests: { cpu: "200m" },
    };
    const live = desired.map((o) => asLive(o));
    const liveSts = live.find((o) => o.kind === "StatefulSet")!;
    (liveSts.spec as any).template.spec.containers[0].resources = {
      limits: { cpu: "1", memory: "2Gi" },
      requests: { cpu: "200m" },
    };
    expect(buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).counts.update).to.equal(0);
    (liveSts.spec as any).template.spec.containers[0].resources.limits.cpu = "2";
    const change = buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).changes.find(
      (c) => c.action === "update",
    )!;
    expect(change.diff)
      .to.include("-              cpu: '2'")
      .and.include("+              cpu: 1000m")
      .and.include(" memory: 2048Mi")
      .and.not.include("2Gi");
  });

  it("does not treat equal amounts as equal outside quantity maps", () => {
    const desired = clusterObjects("a");
    desired.find((o) => o.kind === "ConfigMap")!.data = { a: "1000m" };
    const live = desired.map((o) => asLive(o));
    live.find((o) => o.kind === "ConfigMap")!.data = { a: "1" };
    expect(buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).counts.update).to.equal(1);
  });
});
