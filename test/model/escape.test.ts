// model/escape.ts: control, bidi and line-breaking characters shown as escapes; other text, non-ASCII included, as
// written.
import { expect } from "chai";
import { load } from "js-yaml";
import { escapeControls, escapeLines } from "../../src/model/escape.js";
import { formatData } from "../../src/cli/common.js";

describe("model: escapeControls", () => {
  it("shows newlines, carriage returns, tabs, ESC, BEL, DEL and C1 controls as escapes", () => {
    expect(escapeControls("a\nb\rc\td")).to.equal("a\\nb\\rc\\td");
    expect(escapeControls("\u001b[31mred\u001b[0m\u0007")).to.equal("\\x1b[31mred\\x1b[0m\\x07");
    expect(escapeControls("\u0000\u007f\u0085\u009b2J")).to.equal("\\x00\\x7f\\x85\\x9b2J");
  });

  it("shows bidi overrides, isolates and marks, line and paragraph separators", () => {
    expect(escapeControls("abc\u202etxt.exe")).to.equal("abc\\u202etxt.exe");
    expect(escapeControls("\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u2029\ufeff")).to.equal(
      "\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029\\ufeff",
    );
  });

  it("leaves printable text alone, non-ASCII and emoji included", () => {
    for (const s of ["vc-team-a", "Zoë Ångström", "東京", "ok ✓ 🚀", "a\\nb (a backslash and n)"])
      expect(escapeControls(s)).to.equal(s);
  });

  it("escapeLines keeps the line breaks of a multi-line text and escapes the rest", () => {
    expect(escapeLines("one\n\u001b[2Jtwo\r\nthree")).to.equal("one\n\\x1b[2Jtwo\\r\nthree");
  });

  it("every character below U+0020 and from U+007F to U+009F is escaped (none passes through)", () => {
    for (let c = 0; c <= 0x9f; c++) {
      if (c >= 0x20 && c < 0x7f) continue;
      const out = escapeControls(String.fromCharCode(c));
      expect(out, `U+${c.toString(16)}`).to.match(/^\\/);
      expect(/[\u0000-\u001f\u007f-\u009f]/.test(out)).to.equal(false);
    }
  });
});

describe("cli: formatData -o yaml", () => {
  it(
    "double-quotes and escapes strings with bidi, separators and C1 controls, keys included, and reads back the " +
      "same data",
    () => {
      const data = {
        "k\u202ey": "a\u202eb",
        m: "line1\nline2\u2066",
        n: 5,
        p: "plain",
        c: "x\u0085y\u009bz",
        l: ["\u200f", "ok"],
        bom: "\ufeffhead",
      };
      const text = formatData(data, "yaml");
      expect(text).to.not.match(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/);
      expect(load(text)).to.deep.equal(data);
      expect(text).to.contain("p: plain");
    },
  );
});
