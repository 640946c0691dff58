// DiffSpill keeps a report's diff texts in memory up to its bound and in an unlinked temporary file past it, reading
// each back whole (UTF-8 intact); a file that cannot be made keeps them in memory.
import { expect } from "chai";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { DiffSpill } from "../../src/plan/spill.js";

const vcTemporaries = () => readdirSync(tmpdir()).filter((n) => n.startsWith("vc-diff-"));

describe("plan/spill DiffSpill", () => {
  it(
    "keeps diffs in memory up to its bound, then in a file it reads each back from, leaving nothing in the " +
      "temporary folder",
    () => {
      const before = vcTemporaries();
      const spill = new DiffSpill(100);
      const texts = ["+a: 1\n".repeat(10), "+b: ünïcödé ✓\n".repeat(8), "", "+c: 3\n".repeat(30), "-d: 🚀\n"];
      const changes = texts.map((diff) => spill.keep({ action: "create", diff }));
      try {
        // What fits under the bound stays (the first and the small last one), the rest goes to the file.
        expect(spill.bytes.memory).to.equal(Buffer.byteLength(texts[0]! + texts[4]!));
        expect(spill.bytes.file).to.equal(Buffer.byteLength(texts[1]! + texts[3]!));
        expect(vcTemporaries()).to.deep.equal(before); // unlinked as soon as it is open
        // Read back as often as asked, in any order; JSON.stringify sees the text as a property.
        expect(changes.map((c) => c.diff).reverse()).to.deep.equal([...texts].reverse());
        expect(JSON.parse(JSON.stringify(changes[3]))).to.deep.equal({ action: "create", diff: texts[3] });
      } finally {
        spill.close();
      }
    },
  );

  it("keeps every diff in memory when no temporary file can be made", () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = "/nonexistent/vc-spill-test";
    try {
      const spill = new DiffSpill(10);
      const change = spill.keep({ diff: "+x: 1\n".repeat(20) });
      expect(spill.bytes).to.deep.equal({ memory: 120, file: 0 });
      expect(change.diff).to.equal("+x: 1\n".repeat(20));
      spill.close();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});
