// The documentation: generated references are current, links resolve, and nothing points outside the project.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { generatedDocs } from "../scripts/docs/generate.js";
import { COVERAGE, ROWS } from "../src/ops/doctor/coverage.js";

const ROOT = join(import.meta.dirname, "..");
const tracked = (): string[] =>
  execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);

/** Pages other engineers write in parallel; the docs index links them before they land. */

/** GitHub's anchors of a Markdown file's headings. */
function anchors(path: string): Set<string> {
  const text = readFileSync(join(ROOT, path), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set(
    [...text.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-"),
    ),
  );
}

describe("docs", () => {
  it("the generated references are current (run npm run docs after changing schemas/ or a command)", async () => {
    for (const [path, text] of await generatedDocs(ROOT)) {
      const current = existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), "utf8") : "(missing)";
      expect(current === text, `${path} is stale: run npm run docs`).to.equal(true);
    }
  });

  it("README.md and docs/troubleshooting.md show every check of vc doctor's coverage table with its severity", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const troubleshooting = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");
    for (const c of COVERAGE) {
      const line = new RegExp(`\\| \`${c.check}\` \\| ${c.severity} \\|`);
      if (ROWS[c.row].section === "7") expect(readme, `${c.check} ${c.severity}`).to.match(line);
      expect(troubleshooting, `${c.check} ${c.severity}`).to.match(line);
    }
  });

  it("the CLI reference names every vc command and option", async () => {
    const text = readFileSync(join(ROOT, "docs/cli-reference.md"), "utf8");
    for (const heading of ["## `vc init`", "## `vc validate`", "### `vc debug collect`", "## `vc-metrics-proxy`"])
      expect(text).to.include(heading);
    expect(text).to.include("`--dry-run`").and.to.include("`--exit-code`");
  });

  it("every relative link of README.md and docs/ leads to a file of the project", () => {
    const pages = tracked().filter((f) => f === "README.md" || (f.startsWith("docs/") && f.endsWith(".md")));
    expect(pages.length).to.be.greaterThan(5);
    const broken: string[] = [];
    for (const page of pages) {
      const prose = readFileSync(join(ROOT, page), "utf8")
        .replace(/```[\s\S]*?```/g, "")
        .replace(/`[^`\n]*`/g, "");
      for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!.split("#")[0]!;
        if (/^[a-z]+:/.test(target)) continue;
        const anchor = m[1]!.split("#")[1];
        const path = target ? normalize(join(dirname(page), target)) : page;
        if (!existsSync(join(ROOT, path))) broken.push(`${page}: ${m[1]}`);
        else if (anchor && path.endsWith(".md") && !anchors(path).has(anchor))
          broken.push(`${page}: ${m[1]} (no such heading)`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it("nothing in the project refers to paths outside it (only .ci/run may name the shared folder)", () => {
    const offenders: string[] = [];
    const outside = new RegExp(`${["\\.\\./", "shared/"].join("")}|${["/work", "/shared"].join("")}`);
    for (const file of tracked()) {
      if (file === ".ci/run" || file === "test/docs.test.ts" || !existsSync(join(ROOT, file))) continue;
      const text = readFileSync(join(ROOT, file), "utf8");
      if (outside.test(text)) offenders.push(file);
    }
    expect(offenders).to.deep.equal([]);
  });

  it("README.md is a landing page: what vc is, npm ci && npm start, npm test, a tour, links into docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).to.include("npm ci && npm start").and.to.include("npm test");
    expect(readme).to.match(/\]\(docs\/index\.md\)/);
    expect(readme.length).to.be.lessThan(12000);
  });

  it(
    "holds no stray comment markers: only the generated regions' begin/end pairs and the generated pages' " +
      "first line",
    () => {
      const pages = tracked().filter((f) => f === "README.md" || (f.startsWith("docs/") && f.endsWith(".md")));
      const stray: string[] = [];
      for (const page of pages) {
        const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
        lines.forEach((line, i) => {
          if (!line.includes("<!--")) return;
          const region = /^<!-- (begin|end) generated: ([\w-]+)/.exec(line);
          const generatedPage = i === 0 && /^<!-- Generated by `npm run docs`/.test(line);
          if (!region && !generatedPage) stray.push(`${page}:${i + 1}: ${line}`);
          if (region?.[1] === "begin" && !lines.some((l) => l.startsWith(`<!-- end generated: ${region[2]}`)))
            stray.push(`${page}:${i + 1}: no end`);
        });
      }
      expect(stray).to.deep.equal([]);
    },
  );
});
