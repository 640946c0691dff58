import { expect } from "chai";
import { editDistance, suggest } from "../../src/validate/suggest.js";

describe("validate/suggest", () => {
  it("counts an adjacent swap as one edit", () => {
    expect(editDistance("enabeld", "enabled")).to.equal(1);
    expect(editDistance("kitten", "sitting")).to.equal(3);
    expect(editDistance("", "abc")).to.equal(3);
  });

  it("suggests the nearest known key within a small distance", () => {
    expect(suggest("enabeld", ["enabled", "sync"])).to.equal("enabled");
    expect(suggest("virtualService", ["virtualServices", "gateways", "destinationRules"])).to.equal("virtualServices");
    expect(suggest("Enabled", ["enabled"])).to.equal("enabled");
  });

  it("suggests nothing when no key is close", () => {
    expect(suggest("persistence", ["enabled", "sync"])).to.equal(undefined);
    expect(suggest("xyz", [])).to.equal(undefined);
    expect(suggest("tcp", ["http", "hosts"])).to.equal(undefined);
    expect(suggest("htp", ["http", "hosts"])).to.equal("http");
  });
});
