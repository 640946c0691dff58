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

/** Modules `file` loads when it is imported: static imports and re-exports, not `import type` (erased) nor `import()` (lazy). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^"';]*?\sfrom\s+)?"([^"]+)"/gm)) out.push(m[1]!);
  return out;
}

/** The packages reached from `entries` (files under src/) through static imports. */
function packagesReached(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const queue = entries.map((e) => join(SRC, e));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith(".")) queue.push(join(file, "..", spec.replace(/\.js$/, ".ts")));
      else if (!spec.startsWith("node:")) packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
  }
  return packages;
}

describe("layers", () => {
  it("commands that never reach a host do not load the Kubernetes client (about 0.8 s of start-up)", () => {
    // What `vc validate` and `vc render` load: main.ts, the request budget its hook sets, and the command's module.
    for (const command of ["cli/validate.ts", "cli/render.ts"]) {
      const reached = packagesReached(["cli/main.ts", "target/kube/budget.ts", command]);
      expect([...reached], command).to.include("js-yaml").and.not.include("@kubernetes/client-node");
    }
  });

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
