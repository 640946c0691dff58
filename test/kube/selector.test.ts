import { expect } from "chai";
import fc from "fast-check";
import {
  formatMatchLabels,
  labelMatcher,
  matchesFields,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from "../../src/kube/selector.js";

describe("kube/selector", () => {
  describe("parseLabelSelector", () => {
    it("parses every operator of the full syntax", () => {
      expect(parseLabelSelector("a=b,c==d,e!=f,g in (h, i),j notin (k),l,!m,n>1,o<2")).to.deep.equal([
        { key: "a", operator: "=", values: ["b"] },
        { key: "c", operator: "=", values: ["d"] },
        { key: "e", operator: "!=", values: ["f"] },
        { key: "g", operator: "in", values: ["h", "i"] },
        { key: "j", operator: "notin", values: ["k"] },
        { key: "l", operator: "exists", values: [] },
        { key: "m", operator: "!", values: [] },
        { key: "n", operator: "gt", values: ["1"] },
        { key: "o", operator: "lt", values: ["2"] },
      ]);
    });

    it("accepts whitespace around operators, prefixed keys and empty values", () => {
      expect(parseLabelSelector(" app = web , example.com/tier in(a) , ! x, y=")).to.deep.equal([
        { key: "app", operator: "=", values: ["web"] },
        { key: "example.com/tier", operator: "in", values: ["a"] },
        { key: "x", operator: "!", values: [] },
        { key: "y", operator: "=", values: [""] },
      ]);
      expect(parseLabelSelector("")).to.deep.equal([]);
      expect(parseLabelSelector("  ")).to.deep.equal([]);
      expect(parseLabelSelector(undefined)).to.deep.equal([]);
    });

    it("rejects malformed selectors with a SelectorError", () => {
      const bad = [
        "a=b,",
        ",a",
        "a in b",
        "a in (b",
        "in (a)",
        "a=b=c",
        "-a=b",
        "a/b/c=d",
        "UPPER.example/x=y",
        `a=${"v".repeat(64)}`,
        `${"k".repeat(64)}=v`,
        "a>b",
        "a=(b)",
        "a b",
      ];
      for (const s of bad) expect(() => parseLabelSelector(s), s).to.throw(SelectorError);
      // "a==" is valid: key a equals the empty value.
      expect(parseLabelSelector("a==")).to.deep.equal([{ key: "a", operator: "=", values: [""] }]);
    });
  });

  describe("labelMatcher", () => {
    const labels = { app: "web", tier: "front", n: "5" };
    const cases: Array<[string, boolean]> = [
      ["app=web", true],
      ["app==db", false],
      ["app!=db", true],
      ["missing!=x", true],
      ["app in (db,web)", true],
      ["missing in (x)", false],
      ["app notin (web)", false],
      ["missing notin (x)", true],
      ["tier", true],
      ["missing", false],
      ["!tier", false],
      ["!missing", true],
      ["n>4", true],
      ["n<5", false],
      ["app>1", false],
      ["app=web,tier=back", false],
      ["", true],
    ];
    for (const [sel, expected] of cases) {
      it(`"${sel}" ${expected ? "selects" : "rejects"} {app=web,tier=front,n=5}`, () => {
        expect(labelMatcher(sel)(labels)).to.equal(expected);
      });
    }

    it("treats absent labels as no labels", () => {
      expect(labelMatcher("!a")(undefined)).to.equal(true);
      expect(labelMatcher("a")(null)).to.equal(false);
    });

    it("matchLabels formatted and parsed back select exactly the labels that contain them", () => {
      const key = fc.stringMatching(/^[a-z]([a-z0-9.-]{0,8}[a-z0-9])?$/);
      const value = fc.stringMatching(/^([a-z0-9]([a-z0-9._-]{0,8}[a-z0-9])?)?$/);
      fc.assert(
        fc.property(
          fc.dictionary(key, value, { maxKeys: 4 }),
          fc.dictionary(key, value, { maxKeys: 6 }),
          (want, have) => {
            const matcher = labelMatcher(formatMatchLabels(want));
            const expected = Object.entries(want).every(([k, v]) => Object.hasOwn(have, k) && have[k] === v);
            expect(matcher(have)).to.equal(expected);
          },
        ),
      );
    });
  });

  describe("field selectors", () => {
    it("parses metadata.name and metadata.namespace with =, == and !=", () => {
      const reqs = parseFieldSelector("metadata.name=a, metadata.namespace!=b,metadata.name==a");
      expect(reqs).to.deep.equal([
        { field: "metadata.name", operator: "=", value: "a" },
        { field: "metadata.namespace", operator: "!=", value: "b" },
        { field: "metadata.name", operator: "=", value: "a" },
      ]);
      expect(matchesFields(reqs, { "metadata.name": "a", "metadata.namespace": "c" })).to.equal(true);
      expect(matchesFields(reqs, { "metadata.name": "a", "metadata.namespace": "b" })).to.equal(false);
      expect(matchesFields(parseFieldSelector("metadata.namespace="), { "metadata.name": "n" })).to.equal(true);
    });

    it("rejects unsupported fields and malformed terms", () => {
      expect(() => parseFieldSelector("spec.nodeName=x")).to.throw(SelectorError, /not supported/);
      expect(() => parseFieldSelector("metadata.name")).to.throw(SelectorError);
      expect(() => parseFieldSelector("metadata.name=a,")).to.throw(SelectorError);
      expect(parseFieldSelector("spec.nodeName=x", ["spec.nodeName"])).to.have.length(1);
    });
  });
});
