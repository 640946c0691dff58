// Help text: wrapped to the terminal's width, unwrapped in a file or pipe (not commander's 80 columns), and pointing at
// documentation by URL, never at a path of this repository that an installed package does not have.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/main.js";
import { helpWidth } from "../../src/util/help-width.js";
import { buildCommand } from "../../src/metrics-proxy/config.js";
import { docsUrl, PROJECT_URL, packageInfo } from "../../src/model/package.js";

const ROOT = join(import.meta.dirname, "../..");
const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];

describe("help text", () => {
  it("is as wide as the terminal; in a file or pipe $COLUMNS, else unlimited", () => {
    expect(helpWidth({ isTTY: true, columns: 132 }, {})).to.equal(132);
    expect(helpWidth({ isTTY: true, columns: 132 }, { COLUMNS: "60" })).to.equal(132);
    expect(helpWidth({ isTTY: false }, { COLUMNS: "60" })).to.equal(60);
    expect(helpWidth({ isTTY: false }, { COLUMNS: "wide" })).to.equal(Number.MAX_SAFE_INTEGER);
    expect(helpWidth({}, {})).to.equal(Number.MAX_SAFE_INTEGER);
  });

  it("vc doctor --help into a pipe keeps its description on one line; with COLUMNS=100 it wraps to 100", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env.COLUMNS;
    const piped = spawnSync(process.execPath, [join(ROOT, "bin/vc.js"), "doctor", "--help"], { encoding: "utf8", env });
    expect(piped.status, piped.stderr).to.equal(0);
    const description = piped.stdout.split("\n").find((l) => l.startsWith("check a virtual cluster"))!;
    expect(description).to.include("0 otherwise");
    expect(description.length).to.be.greaterThan(200);
    const narrow = spawnSync(process.execPath, [join(ROOT, "bin/vc.js"), "doctor", "--help"], {
      encoding: "utf8",
      env: { ...env, COLUMNS: "100" },
    });
    const lines = narrow.stdout.split("\n");
    expect(Math.max(...lines.map((l) => l.length))).to.be.at.most(100);
    expect(lines.length).to.be.greaterThan(piped.stdout.split("\n").length);
  });

  it("points at documentation by URL of this release, never at a path of the repository", async () => {
    const commands = [...everyCommand(await buildProgram()), buildCommand()];
    const paths: string[] = [];
    for (const c of commands) {
      const text = c.helpInformation().replace(/https:\/\/\S+/g, "");
      for (const m of text.matchAll(/[\w./-]*\b(?:docs|src|test|scripts)\/[\w./-]+|[\w./-]+\.(?:md|ts)\b/g))
        paths.push(`${c.name()}: ${m[0]}`);
    }
    expect(paths).to.deep.equal([]);
    const doctor = commands.find((c) => c.name() === "doctor")!;
    expect(doctor.helpInformation().replace(/\s+/g, " ")).to.include(docsUrl("troubleshooting.md"));
    expect(docsUrl("troubleshooting.md")).to.equal(
      `${PROJECT_URL}/blob/v${packageInfo().version}/docs/troubleshooting.md`,
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { repository: { url: string } };
    expect(pkg.repository.url).to.equal(`git+${PROJECT_URL}.git`);
  });
});
