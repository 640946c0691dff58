import { expect } from "chai";
import { formatColumns, parseDuration, UserError } from "../../src/cli/common.js";

describe("cli/common: parseDuration", () => {
  it("reads Go durations, as the values schema and Kubernetes write them", () => {
    expect(parseDuration("15s")).to.equal(15_000);
    expect(parseDuration("1m30s")).to.equal(90_000);
    expect(parseDuration("1.5h")).to.equal(5_400_000);
    expect(parseDuration("500ms")).to.equal(500);
    expect(parseDuration("250us")).to.equal(0.25);
    expect(parseDuration("250µs")).to.equal(0.25);
    expect(parseDuration("2000ns")).to.equal(0.002);
  });
  it("refuses a bare number, an unknown unit, trailing text and the empty string", () => {
    for (const bad of ["15", "5x", "1m30", "", "s", " 5s", "5s "]) {
      expect(() => parseDuration(bad), JSON.stringify(bad)).to.throw(UserError, /invalid duration/);
    }
  });
});

describe("cli/common: formatColumns", () => {
  it("aligns columns three spaces apart, leaves the last one unpadded, and prints nothing for no rows", () => {
    expect(
      formatColumns([
        ["NAME", "STATE", "NOTE"],
        ["a-long-name", "ok", "x"],
        ["b", "pending", ""],
      ]),
    ).to.equal("NAME          STATE     NOTE\na-long-name   ok        x\nb             pending\n");
    expect(formatColumns([])).to.equal("");
  });
});
