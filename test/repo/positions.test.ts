import { expect } from "chai";
import { YamlPositions } from "../../src/repo/positions.js";

const TEXT = `# comment
apiVersion: v1
metadata:
  name: "quoted"
spec:
  list:
    - a: 1
      b: 2
    - c: 3
---
second:
  deep:
    key: value
`;

describe("repo/positions", () => {
  const p = new YamlPositions(TEXT);

  it("locates keys and values in the first document", () => {
    expect(p.locate(0, ["apiVersion"])).to.deep.equal({ line: 2, col: 1 });
    expect(p.locate(0, ["apiVersion"], "value")).to.deep.equal({ line: 2, col: 13 });
    expect(p.locate(0, ["metadata", "name"])).to.deep.equal({ line: 4, col: 3 });
    expect(p.locate(0, ["metadata", "name"], "value")).to.deep.equal({ line: 4, col: 9 });
  });

  it("walks through sequences", () => {
    expect(p.locate(0, ["spec", "list", 0, "b"])).to.deep.equal({ line: 8, col: 7 });
    expect(p.locate(0, ["spec", "list", 1, "c"])).to.deep.equal({ line: 9, col: 7 });
    expect(p.locate(0, ["spec", "list", 1], "value")).to.deep.equal({ line: 9, col: 7 });
  });

  it("locates paths in later documents", () => {
    expect(p.locate(1, ["second", "deep", "key"])).to.deep.equal({ line: 13, col: 5 });
  });

  it("falls back to the deepest existing part of a missing path", () => {
    expect(p.locate(0, ["spec", "missing", "x"])).to.deep.equal({ line: 6, col: 3 });
    expect(p.locate(0, [])).to.deep.equal({ line: 2, col: 1 });
    expect(p.locate(7, ["x"])).to.deep.equal({ line: 1, col: 1 });
  });
});
