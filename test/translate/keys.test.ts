import { expect } from "chai";
import { ANNOTATIONS, LABELS, PREFIX, inventorySelector } from "../../src/translate/keys.js";

describe("translate/keys", () => {
  it("puts every label and annotation key under the one prefix", () => {
    for (const key of [...Object.values(LABELS), ...Object.values(ANNOTATIONS)]) {
      expect(key.startsWith(`${PREFIX}/`), key).to.equal(true);
    }
  });
  it("selects a cluster's inventory by its label", () => {
    expect(inventorySelector("team-a")).to.equal("vc.orch.io/inventory=team-a");
  });
});
