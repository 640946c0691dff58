import { expect } from "chai";
import { parseQuantity, sameQuantity } from "../../src/plan/quantity.js";
import { buildPlan } from "../../src/plan/build.js";
import { asLive, clusterObjects } from "./fixtures.js";

describe("plan/quantity", () => {
  it("reads decimal, binary and exponent suffixes", () => {
    expect(parseQuantity("500m")).to.equal(0.5);
    expect(parseQuantity("1Gi")).to.equal(2 ** 30);
    expect(parseQuantity("1.5k")).to.equal(1500);
    expect(parseQuantity("1e3")).to.equal(1000);
    expect(parseQuantity("2E2")).to.equal(200);
    expect(parseQuantity("2E")).to.equal(2e18);
    for (const bad of ["", "m", "1x", "1 Gi", "abc", "1.2.3"]) expect(parseQuantity(bad), bad).to.equal(undefined);
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
    (sts.spec as any).template.spec.containers[0].resources = { limits: { cpu: "1000m", memory: "2048Mi" }, requests: { cpu: "200m" } };
    const live = desired.map((o) => asLive(o));
    const liveSts = live.find((o) => o.kind === "StatefulSet")!;
    (liveSts.spec as any).template.spec.containers[0].resources = { limits: { cpu: "1", memory: "2Gi" }, requests: { cpu: "200m" } };
    expect(buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).counts.update).to.equal(0);
    (liveSts.spec as any).template.spec.containers[0].resources.limits.cpu = "2";
    const change = buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).changes.find((c) => c.action === "update")!;
    expect(change.diff).to.include("-              cpu: '2'").and.include("+              cpu: 1000m").and.include(" memory: 2048Mi").and.not.include("2Gi");
  });

  it("does not treat equal amounts as equal outside quantity maps", () => {
    const desired = clusterObjects("a");
    desired.find((o) => o.kind === "ConfigMap")!.data = { a: "1000m" };
    const live = desired.map((o) => asLive(o));
    live.find((o) => o.kind === "ConfigMap")!.data = { a: "1" };
    expect(buildPlan("a", desired, live, { prune: false, allowMassPrune: false }).counts.update).to.equal(1);
  });
});
