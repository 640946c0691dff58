import { expect } from "chai";
import fc from "fast-check";
import { dump, loadAll } from "js-yaml";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { fastLoadAll } from "../../src/repo/fast-yaml.js";

/** The fast loader must give up or agree with js-yaml; it must give up whenever js-yaml fails. */
function agrees(text: string): boolean {
  const fast = fastLoadAll(text);
  let slow: unknown[] | Error;
  try {
    slow = loadAll(text);
  } catch (e) {
    slow = e as Error;
  }
  if (fast === undefined) return true;
  return !(slow instanceof Error) && isDeepStrictEqual(fast, slow);
}

const EXAMPLES = new URL("../../clusters/", import.meta.url).pathname;
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith(".yaml") ? [join(dir, e.name)] : [],
  );
}

const CASES = [
  "a: 1\n", "# c\n---\na: 1\n", "a: 1\n---\n", "---\n", "---\n---\na: 1", "a: 1\n---\n# only\n",
  "a:\n- x\n- y\nb: 1\n", "a:\n  - x\nb:\n", "- a: 1\n  b: 2\n- - x\n  - y\n", "a: b # c\nd: e#f\n",
  "a: 'it''s'\n", 'a: "x y"\n', 'a: "x\\ty"\n', "k: -\n", "k: - x\n", "? a\n", "a: x\n  y\n", "--- a: 1\n", "a: 1\n...\n",
  "a:   \n  b: 1\n", "a: 1 \n", "a: -1.5e3\nb: 0o17\nc: .5\nd: +1\ne: 1_000\nf: 0b11\ng: -x\n", "a: ~\nb: null\nc: Null\nd: TRUE\ne: yes\n",
  "a: 1\na: 2\n", "1: x\n", "true: x\n", "a:\n  b: 1\n c: 2\n", "a:\n   b: 1\n  c: 2\n", "  a: 1\n  b: 2\n", "a: b: c\n", "a: b:\n",
  "- a\nb: 1\n", "a: 1\n- b\n", "-\n- x\n", "- \n  a: 1\n", "a: [1, 2]\n", "a: {b: 1}\n", "a: &x 1\nb: *x\n", "a: !!str 1\n",
  "a: |\n  x\n", "a: >\n  x\n", "'a': 1\n", '"a b": 1\n', "a:\tb\n", "a: 1\r\nb: 2\r\n", "__proto__: 1\n", "a: 'x'y\n", "a: 'x' # c\n",
  "a: http://x:80/y\n", "a: 2026-01-01\n", "a: 0x1F\n", "a: .inf\nb: -.Inf\nc: .NaN\n", "a:\n  - - x\n    - y\n  - z\n", "---\n- a\n---\n- b\n",
  "a:\n- b: 1\n  c:\n  - d\n  e: 2\n", "a: 1\n---#\nb: 2\n", "a: 1\n--- # c\nb: 2\n", "a: 1\n---  \nb: 2\n", "a: x\ufeffy\n", "a: \ufeff\n", "a: x\u2028y\n", "a: x\u0085y\n", "a: x\u0007\n", "a: x\u00a0y\n", "a: \u00a0v1\n", "a: v\u00a0\n", "a: \u3000v\n", "a: \u2003v # c\u2003\n", "- \u00a0x\n", "a: '\n", 'a: "\n', "%YAML 1.2\n---\na: 1\n", "a: #c\n  b: 1\n", "a:b\n", "a: b\n c\n",
];

describe("repo/fast-yaml", () => {
  it("agrees with js-yaml (or gives up) on hand-picked edge cases", () => {
    for (const c of CASES) expect(agrees(c), JSON.stringify(c)).to.equal(true);
  });

  it("takes the fast path for the usual shapes", () => {
    expect(fastLoadAll("a:\n- x\n- y\nb: 1\n")).to.deep.equal([{ a: ["x", "y"], b: 1 }]);
    expect(fastLoadAll("- a: 1\n  b: 2\n- - x\n  - y\n")).to.deep.equal([[{ a: 1, b: 2 }, ["x", "y"]]]);
    expect(fastLoadAll("a: 1\n---\n")).to.deep.equal([{ a: 1 }, null]);
    expect(fastLoadAll("")).to.deep.equal([]);
  });

  it("gives up on duplicate keys, flow collections, anchors and tabs (js-yaml decides)", () => {
    for (const c of ["a: 1\na: 2\n", "a: [1]\n", "a: &x 1\n", "a:\tb\n", "a: |\n  x\n"]) expect(fastLoadAll(c), c).to.equal(undefined);
  });

  it("loads every example file itself, identically to js-yaml", () => {
    for (const f of yamlFiles(EXAMPLES)) {
      const text = readFileSync(f, "utf8");
      expect(fastLoadAll(text), f).to.deep.equal(loadAll(text));
    }
  });

  it("agrees with js-yaml on dumped random documents, mostly through the fast path", () => {
    const key = fc.oneof(
      { weight: 30, arbitrary: fc.stringMatching(/^[a-z][a-z0-9.\/-]{0,6}$/) },
      { weight: 1, arbitrary: fc.constantFrom("true", "1", "null", "a b", "-a", "#", "__proto__", "", "a:b", "é") },
      { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
    );
    const scalar = fc.oneof(
      { weight: 20, arbitrary: fc.stringMatching(/^[a-zA-Z0-9 :#.\/-]{0,10}$/) },
      fc.constantFrom("", " ", "true", "1.0", "a: b", "#x", "x #y", "- a", "-", "-1", "*a", "&a", "'q'", '"q"', "~", "0x1F", "1_000", "2026-01-01", "a\nb", "é", "x\\y", "it's"),
      fc.string({ maxLength: 8 }),
      { weight: 3, arbitrary: fc.integer() },
      fc.double({ noNaN: true }),
      { weight: 3, arbitrary: fc.boolean() },
      fc.constant(null),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, scalar, fc.array(tie("node"), { minLength: 1, maxLength: 4 }), fc.dictionary(key, tie("node"), { minKeys: 1, maxKeys: 4 })),
    })).node;
    const opts = fc.record({ seqNoIndent: fc.boolean(), quoteStyle: fc.constantFrom("single" as const, "double" as const), forceQuotes: fc.boolean(), indent: fc.constantFrom(2, 4) });
    let fast = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.array(fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), { minLength: 1, maxLength: 3 }), opts, (docs, o) => {
        const text = docs.map((d) => dump(d, { ...o, lineWidth: -1 })).join("---\n");
        runs++;
        if (fastLoadAll(text) !== undefined) fast++;
        return agrees(text);
      }),
      { numRuns: 300 },
    );
    expect(fast / runs).to.be.greaterThan(0.25);
  });

  it("agrees with js-yaml on randomly damaged manifests", () => {
    const texts = yamlFiles(EXAMPLES).map((f) => readFileSync(f, "utf8"));
    const edit = fc.record({ file: fc.nat(), at: fc.nat(), kind: fc.nat({ max: 5 }), ch: fc.constantFrom(" ", "-", ":", "#", "'", '"', "\n", "x", "  ", "- ", ": ") });
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 3 }), (edits) => {
        let text = texts[edits[0]!.file % texts.length]!;
        for (const e of edits) {
          const at = e.at % (text.length + 1);
          text = e.kind === 0 ? text.slice(0, at) + text.slice(at + 1) : e.kind === 1 ? text.slice(0, at) + text.slice(at + 2) : text.slice(0, at) + e.ch + text.slice(at);
        }
        return agrees(text);
      }),
      { numRuns: 1000 },
    );
  });
});
