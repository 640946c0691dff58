import { expect } from "chai";
import fc from "fast-check";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseYaml } from "../../src/repo/yaml.js";
import { SourceFile } from "../../src/validate/finding.js";
import { checkMeshDocument } from "../../src/validate/mesh.js";
import { validateValuesDocument } from "../../src/validate/values.js";

const EXAMPLES = new URL("../../clusters/", import.meta.url).pathname;
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith(".yaml") ? [join(dir, e.name)] : [],
  );
}

describe("validate: damaged input never crashes", () => {
  const texts = yamlFiles(EXAMPLES).map((f) => readFileSync(f, "utf8"));
  const edit = fc.record({
    file: fc.nat(),
    at: fc.nat(),
    kind: fc.nat({ max: 3 }),
    text: fc.oneof(
      fc.constantFrom("- ", ": ", "[", "{", "&a ", "*a", "!!int ", "'", "\n  ", "null", "---\n", "1", "true"),
      fc.string({ maxLength: 4 }),
    ),
  });

  it("turns every damaged values file or mesh manifest into diagnostics, each with a position inside the file", () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        let text = texts[edits[0]!.file % texts.length]!;
        for (const e of edits) {
          const at = e.at % (text.length + 1);
          text =
            e.kind === 0
              ? text.slice(0, at) + text.slice(at + e.text.length)
              : text.slice(0, at) + e.text + text.slice(at);
        }
        const lines = text.split("\n").length;
        for (const d of validateValuesDocument(text, "v.yaml")) {
          expect(d.line).to.be.within(0, lines);
          expect(d.message).to.be.a("string").and.not.equal("");
        }
        const parsed = parseYaml(text);
        if (parsed.ok) {
          const source = new SourceFile("m.yaml", text);
          parsed.docs.forEach((doc, i) => {
            if (doc === null) return;
            for (const f of checkMeshDocument(doc, i).findings)
              expect(source.diagnostic(f).line).to.be.within(1, lines);
          });
        }
      }),
      { numRuns: 200 },
    );
  });
});
