import { expect } from "chai";
import { deepMerge, layerSetting } from "../../src/repo/merge.js";

describe("repo/merge", () => {
  it("merges mappings key by key, replaces lists and scalars", () => {
    const base = { a: { b: 1, c: [1, 2] }, d: "x" };
    const over = { a: { c: [3], e: true }, d: "y" };
    expect(deepMerge(base, over)).to.deep.equal({ a: { b: 1, c: [3], e: true }, d: "y" });
    expect(base).to.deep.equal({ a: { b: 1, c: [1, 2] }, d: "x" });
  });

  it("removes a key set to null in a later layer", () => {
    expect(deepMerge({ a: { b: 1, c: 2 } }, { a: { b: null } })).to.deep.equal({ a: { c: 2 } });
  });

  it("finds the last layer setting a path", () => {
    const layers = [{ a: { b: 1 } }, { c: 1 }, { a: { b: 2 } }];
    expect(layerSetting(layers, ["a", "b"])).to.equal(2);
    expect(layerSetting(layers, ["c"])).to.equal(1);
    expect(layerSetting(layers, ["z"])).to.equal(-1);
  });
});
