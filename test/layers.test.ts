import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

// The command line sits on top: only the entry points may import src/cli/, so every lower layer reads top-down.
const SRC = join(import.meta.dirname, "..", "src");
const ENTRY_POINTS = new Set(["metrics-proxy/main.ts"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("layers", () => {
  it("nothing below the command line imports src/cli/ (only the entry points do)", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const rel = relative(SRC, file);
      if (rel.startsWith("cli/") || ENTRY_POINTS.has(rel)) continue;
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/from\s+"([^"]+)"/g)) {
        const target = join(file, "..", m[1]!);
        if (relative(SRC, target).startsWith("cli/")) offenders.push(`${rel} imports ${m[1]}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
