// Small defects of the loader (#21 item 8): duplicate-key names, .nan in messages, the depth limits as documented,
// CR-only line breaks, damaged dir: status files.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirStatusStore } from "../../src/records/dir-store.js";
import { YamlPositions } from "../../src/repo/positions.js";
import { MAX_DEPTH } from "../../src/repo/js-yaml.js";
import { MAX_EXPANDED_DEPTH, parseYaml, type YamlError } from "../../src/repo/yaml.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { runVc } from "../support/vc.js";

const error = (text: string): YamlError => {
  const r = parseYaml(text);
  if (r.ok) throw new Error("parsed");
  return r.error;
};
const flow = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);
/** `n` nested block mappings under the document's own (n + 1 levels). */
const block = (n: number) =>
  `${Array.from({ length: n }, (_, i) => `${"  ".repeat(i)}k${i}:\n`).join("")}${"  ".repeat(n)}v: 1\n`;

describe("repo: loader defects of #21", () => {
  const tmp: string[] = [];
  const tempDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), "vc-defects-"));
    tmp.push(d);
    return d;
  };
  after(() => tmp.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("names a duplicate quoted key as written, without a stray quote, at its opening quote", () => {
    expect(error('a:\n  "controlPlane": 1\n  "controlPlane": 2\n')).to.deep.equal({
      code: "yaml-duplicate-key",
      message: 'duplicate key "controlPlane" in a mapping: keep one',
      line: 3,
      col: 3,
    });
    expect(error('a:\n  "1\'": 1\n  "1\'": 2\n').message).to.equal('duplicate key "1\'" in a mapping: keep one');
    expect(error("a:\n  'it''s': 1\n  'it''s': 2\n").message).to.equal('duplicate key "it\'s" in a mapping: keep one');
    expect(error('a:\n  "q\\"x": 1\n  "q\\"x": 2\n').message).to.equal('duplicate key "q\\"x" in a mapping: keep one');
    expect(error("a:\n  plain: 1\n  plain: 2\n")).to.include({
      message: 'duplicate key "plain" in a mapping: keep one',
      line: 3,
      col: 3,
    });
  });

  it("reports .nan, .inf and -.inf as written, not as null", async () => {
    const root = tempDir();
    mkdirSync(join(root, "clusters", "a"), { recursive: true });
    writeFileSync(
      join(root, "clusters", "a", "values.yaml"),
      "controlPlane:\n  statefulSet:\n    replicas: .nan\n    image:\n      tag: -.inf\n",
    );
    const r = await loadAndValidate(root);
    const messages = r.diagnostics.map((d) => d.message);
    expect(messages).to.include("controlPlane.statefulSet.replicas must be an integer, got number .nan");
    expect(messages).to.include("controlPlane.statefulSet.image.tag must be a string, got number -.inf (quote it)");
    expect(messages.join("\n")).to.not.contain("null");
  });

  it(`reads ${MAX_DEPTH} nested collections and refuses ${MAX_DEPTH + 1}, as docs/yaml-loading.md says`, () => {
    const refused = { code: "yaml-syntax", message: `YAML nests collections deeper than ${MAX_DEPTH} levels: refused` };
    for (const inner of ["", "1", "{a: 1}", "[]"]) {
      const extra = inner.startsWith("{") || inner.startsWith("[") ? 1 : 0;
      expect(parseYaml(flow(MAX_DEPTH - extra, inner)).ok, `${MAX_DEPTH} levels around ${inner}`).to.equal(true);
      expect(error(flow(MAX_DEPTH + 1 - extra, inner)), `${MAX_DEPTH + 1} levels around ${inner}`).to.include(refused);
    }
    expect(parseYaml(block(MAX_DEPTH - 1)).ok).to.equal(true);
    const deep = error(block(MAX_DEPTH));
    expect(deep).to.include(refused);
    expect(deep.line).to.equal(MAX_DEPTH + 1); // where the collection past the limit starts: its first key
    expect(parseYaml(`${"- ".repeat(MAX_DEPTH)}1\n`).ok).to.equal(true);
    expect(error(`${"- ".repeat(MAX_DEPTH + 1)}1\n`)).to.include(refused);
  });

  it(
    `refuses nesting deeper than ${MAX_EXPANDED_DEPTH} once aliases are expanded, each level of the text within ` +
      `the limit`,
    () => {
      // Five anchors, each 60 levels deep around an alias of the one before: 300 levels once expanded, 61 written.
      let text = `a: &a ${flow(60)}\n`;
      for (const [k, prev] of [
        ["b", "a"],
        ["c", "b"],
        ["d", "c"],
        ["e", "d"],
      ])
        text += `${k}: &${k} ${flow(60, `*${prev}`)}\n`;
      expect(error(text)).to.include({
        code: "yaml-alias-bomb",
        message: `YAML aliases nest collections deeper than ${MAX_EXPANDED_DEPTH} levels once expanded: refused`,
      });
      // Three of them: 181 levels, within the limit.
      expect(parseYaml(`a: &a ${flow(60)}\nb: &b ${flow(60, "*a")}\nc: ${flow(60, "*b")}\n`).ok).to.equal(true);
    },
  );

  it("locates findings in files with CR-only and CR LF line breaks", async () => {
    expect(new YamlPositions("a: 1\rb: 2\rc: 3\r").position(10)).to.deep.equal({ line: 3, col: 1 });
    expect(new YamlPositions("a: 1\r\nb: 2\r\n").position(6)).to.deep.equal({ line: 2, col: 1 });
    const root = tempDir();
    mkdirSync(join(root, "clusters", "a"), { recursive: true });
    writeFileSync(
      join(root, "clusters", "a", "values.yaml"),
      "controlPlane:\r  statefulSet:\r    replicas: 1\r    resourcs: {}\r",
    );
    const r = await loadAndValidate(root);
    const d = r.diagnostics.find((x) => x.message.includes("resourcs"))!;
    expect(d).to.include({ line: 4, col: 5 });
  });

  it(
    "dir: status files with damaged history: vc status and vc history read what is readable, no " + "TypeError",
    async () => {
      const root = tempDir();
      mkdirSync(join(root, "clusters", "a"), { recursive: true });
      writeFileSync(join(root, "clusters", "a", "values.yaml"), "{}\n");
      execFileSync("git", ["init", "-q"], { cwd: root });
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A"], { cwd: root });
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "a"], { cwd: root });
      const good = { revision: "abc", time: "2026-11-24T00:00:00Z", result: "applied", durationMs: 1, counts: {} };
      const status = join(root, "out", ".vc-status");
      mkdirSync(join(status, "history"), { recursive: true });
      writeFileSync(
        join(status, "a.json"),
        JSON.stringify({ cluster: "a", hostNamespace: 7, result: { x: 1 }, history: [null, 7, { revision: 1 }, good] }),
      );
      writeFileSync(join(status, "history", "a.json"), JSON.stringify([null, { revision: 2 }]));
      writeFileSync(join(status, "b.json"), "[1, 2]");
      writeFileSync(join(status, "c.json"), "{not json");
      const store = new DirStatusStore(join(root, "out"));
      const a = (await store.read("a"))!;
      expect(a.history).to.deep.equal([good]);
      expect(a.damagedHistory).to.equal(3);
      expect(a.hostNamespace).to.equal("");
      expect(a.result).to.equal(undefined);
      expect((await store.read("b"))!).to.include({ cluster: "b", damagedHistory: 1 });
      expect((await store.read("c"))!.history).to.deep.equal([]);
      for (const args of [
        ["status", "--target", "dir:out"],
        ["history", "a", "--target", "dir:out"],
        ["status", "--target", "dir:out", "-o", "json"],
      ]) {
        const run = await runVc(args, { cwd: root });
        expect(run.stderr + run.stdout, args.join(" ")).to.not.match(/TypeError|Cannot read properties/);
        expect(run.code, args.join(" ") + run.stderr).to.equal(0);
      }
    },
  );
});
