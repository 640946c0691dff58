import { expect } from "chai";
import { MAX_ALIASES, parseYaml } from "../../src/repo/yaml.js";

function bomb(levels: number, width: number): string {
  const lines = [`l0: &l0 [${Array(width).fill("lol").join(", ")}]`];
  for (let i = 1; i < levels; i++) lines.push(`l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(", ")}]`);
  return lines.join("\n") + "\n";
}

describe("repo/yaml", () => {
  it("parses every document of a stream, empty ones as null", () => {
    const r = parseYaml("a: 1\n---\n---\n- x\n");
    expect(r).to.deep.equal({ ok: true, docs: [{ a: 1 }, null, ["x"]] });
  });

  it("gives an empty file no documents", () => {
    expect(parseYaml("")).to.deep.equal({ ok: true, docs: [] });
    expect(parseYaml("# only a comment\n")).to.deep.equal({ ok: true, docs: [] });
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

  it("refuses an alias bomb within milliseconds and without expanding it", () => {
    const text = bomb(9, 9); // 9^9 = 387 million leaves once expanded
    const heapBefore = process.memoryUsage().heapUsed;
    const start = process.hrtime.bigint();
    const r = parseYaml(text);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error.code).to.equal("yaml-alias-bomb");
    expect(ms).to.be.lessThan(500);
    expect(process.memoryUsage().heapUsed - heapBefore).to.be.lessThan(64 * 1024 * 1024);
  });

  it("refuses more aliases than the limit in one document", () => {
    const text = `a: &a 1\nb: [${Array(MAX_ALIASES + 1).fill("*a").join(", ")}]\n`;
    const r = parseYaml(text);
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error.code).to.equal("yaml-alias-bomb");
  });

  it("accepts a few harmless aliases", () => {
    const r = parseYaml("base: &b {cpu: 1}\nother: *b\n");
    expect(r).to.deep.equal({ ok: true, docs: [{ base: { cpu: 1 }, other: { cpu: 1 } }] });
  });

  it("refuses absurd nesting instead of overflowing the stack", () => {
    const r = parseYaml("[".repeat(5000) + "]".repeat(5000));
    expect(r.ok).to.equal(false);
  });

  it("keeps dates as strings and does not pollute prototypes", () => {
    const r = parseYaml('d: 2026-01-01\n"__proto__": {polluted: true}\n');
    expect(r.ok).to.equal(true);
    if (r.ok) expect((r.docs[0] as Record<string, unknown>).d).to.equal("2026-01-01");
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });
});
