import { expect } from "chai";
import { loadAll } from "js-yaml";
import { MAX_ALIASES, MAX_FILE_ALIAS_NODES, parseYaml } from "../../src/repo/yaml.js";

function bomb(levels: number, width: number): string {
  const lines = [`l0: &l0 [${Array(width).fill("lol").join(", ")}]`];
  for (let i = 1; i < levels; i++)
    lines.push(
      `l${i}: &l${i} [${Array(width)
        .fill(`*l${i - 1}`)
        .join(", ")}]`,
    );
  return `${lines.join("\n")}\n`;
}

/** The documents and alias count of a text that must parse. */
function parsed(text: string): { docs: unknown[]; aliasNodes: number } {
  const r = parseYaml(text);
  if (!r.ok) throw new Error(r.error.message);
  return { docs: r.docs, aliasNodes: r.aliasNodes };
}

describe("repo/yaml", () => {
  it("parses every document of a stream, empty ones as null", () => {
    expect(parsed("a: 1\n---\n---\n- x\n")).to.deep.equal({ docs: [{ a: 1 }, null, ["x"]], aliasNodes: 0 });
  });

  it("gives an empty file no documents", () => {
    expect(parsed("")).to.deep.equal({ docs: [], aliasNodes: 0 });
    expect(parsed("# only a comment\n")).to.deep.equal({ docs: [], aliasNodes: 0 });
  });

  it("reports a syntax error with its 1-based line and column", () => {
    const r = parseYaml("a: 1\nb: [1, 2\nc: 3\n");
    expect(r.ok).to.equal(false);
    if (!r.ok) {
      expect(r.error.code).to.equal("yaml-syntax");
      expect(r.error.line).to.be.greaterThan(1);
      expect(r.error.message).to.match(/^YAML syntax error: /);
    }
  });

  it("reports a duplicate key at the second occurrence, naming it", () => {
    const r = parseYaml("spec:\n  hosts: [a]\n  gateways: [g]\n  hosts: [b]\n");
    expect(r).to.deep.equal({
      ok: false,
      error: { code: "yaml-duplicate-key", message: 'duplicate key "hosts" in a mapping: keep one', line: 4, col: 3 },
    });
  });

  it("refuses an alias bomb without expanding it", () => {
    const text = bomb(9, 9); // 9^9 = 387 million leaves once expanded
    const heapBefore = process.memoryUsage().heapUsed;
    const r = parseYaml(text);
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error.code).to.equal("yaml-alias-bomb");
    expect(process.memoryUsage().heapUsed - heapBefore).to.be.lessThan(64 * 1024 * 1024);
  });

  it("refuses more aliases than the limit in one document", () => {
    const text = `a: &a 1\nb: [${Array(MAX_ALIASES + 1)
      .fill("*a")
      .join(", ")}]\n`;
    const r = parseYaml(text);
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error.code).to.equal("yaml-alias-bomb");
  });

  it("accepts a few harmless aliases", () => {
    expect(parsed("base: &b {cpu: 1}\nother: *b\n")).to.deep.equal({
      docs: [{ base: { cpu: 1 }, other: { cpu: 1 } }],
      aliasNodes: 2,
    });
  });

  it("refuses absurd nesting instead of overflowing the stack", () => {
    const r = parseYaml("[".repeat(5000) + "]".repeat(5000));
    expect(r.ok).to.equal(false);
  });

  it("refuses a self-referencing alias with its line and column instead of overflowing the stack", () => {
    const r = parseYaml("kind: X\na: &x\n  b: *x\n");
    expect(r).to.deep.equal({
      ok: false,
      error: {
        code: "yaml-alias-cycle",
        message: "a YAML alias refers to the collection that contains it (a self-referencing alias): refused",
        line: 3,
        col: 6,
      },
    });
  });

  it(
    "counts alias expansion per file: many small bombs, each under any per-document limit, are refused at the " +
      "document crossing the budget",
    () => {
      // One small bomb: 10 + 10 * 10 + ... nodes, about 7,400 once expanded (the hostile file of issue 16 repeats it
      // ~3,600 times).
      const names = "abcd";
      const one = [`a: &a [${Array(10).fill("x").join(", ")}]`];
      for (let k = 1; k < 4; k++)
        one.push(
          `${names[k]}: &${names[k]} [${Array(10)
            .fill(`*${names[k - 1]}`)
            .join(", ")}]`,
        );
      const docs = Array.from({ length: 40 }, () => one.join("\n"));
      const text = `${docs.join("\n---\n")}\n`;
      for (const d of docs) expect(parseYaml(d).ok).to.equal(true);
      const r = parseYaml(text);
      expect(r.ok).to.equal(false);
      if (!r.ok) {
        expect(r.error.code).to.equal("yaml-alias-bomb");
        expect(r.error.message).to.contain(String(MAX_FILE_ALIAS_NODES));
        expect(r.error.line).to.be.greaterThan(1); // the document that crosses the budget, not the file
      }
    },
  );

  it("does not mistake a large alias-free document for an alias bomb", () => {
    const items = Array.from({ length: 30_000 }, (_, i) => `  - {name: "n${i}", value: "a&b*c", n: ${i}}`);
    const text = `kind: List\nitems:\n${items.join("\n")}\n`;
    const r = parseYaml(text);
    expect(r.ok).to.equal(true);
    if (r.ok) {
      expect(r.aliasNodes).to.equal(0);
      expect(r.docs).to.deep.equal(loadAll(text));
    }
  });

  for (const key of ["__proto__", "constructor", "prototype"]) {
    it(`refuses a "${key}" key with its position, never keeping it`, () => {
      const r = parseYaml(`kind: VirtualService\nspec:\n  hosts: [a]\n  "${key}": {polluted: true}\n`);
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.error).to.include({ code: "yaml-reserved-key", line: 4, col: 3 });
    });
  }

  it("refuses a reserved key reached through an alias or written with escapes", () => {
    const viaAlias = parseYaml("name: &k __proto__\nspec:\n  *k : {polluted: true}\n");
    expect(viaAlias.ok).to.equal(false);
    if (!viaAlias.ok) expect(viaAlias.error.code).to.equal("yaml-reserved-key");
    const aliasEscaped = parseYaml('name: &k "\\x5f_proto__"\nspec:\n  *k : 1\n');
    expect(aliasEscaped.ok).to.equal(false);
    const escaped = parseYaml('spec:\n  "\\x5f_proto__": 1\n');
    expect(escaped.ok).to.equal(false);
    if (!escaped.ok) expect(escaped.error).to.include({ code: "yaml-reserved-key", line: 2, col: 3 });
  });

  it("accepts reserved words as values and inside longer keys", () => {
    const r = parseYaml("description: the constructor of a prototype\nmy__proto__x: 1\n");
    expect(r.ok).to.equal(true);
  });

  it("keeps dates as strings", () => {
    const r = parseYaml("d: 2026-01-01\n");
    expect(r.ok).to.equal(true);
    if (r.ok) expect((r.docs[0] as Record<string, unknown>).d).to.equal("2026-01-01");
  });
});
