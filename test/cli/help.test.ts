// Help text: wrapped to the terminal's width, unwrapped in a file or pipe (not commander's 80 columns), pointing at
// documentation by URL, never at a path of this repository that an installed package does not have; the top-level
// help lists each command on one line of at most 100 characters.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/main.js";
import { helpWidth } from "../../src/util/help-width.js";
import { buildCommand } from "../../src/metrics-proxy/config.js";
import { runVc } from "../support/vc.js";
import { docsUrl, PROJECT_URL, packageInfo } from "../../src/model/package.js";

const ROOT = join(import.meta.dirname, "../..");
const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];

/** A command's help as written to a stream that is not a terminal, under the environment `env`. */
function helpInto(cmd: Command, env: NodeJS.ProcessEnv): string {
  cmd.configureOutput({ getOutHelpWidth: () => helpWidth({ isTTY: false }, env) });
  return cmd.helpInformation();
}

describe("help text", () => {
  let program: Command;
  before(async () => {
    program = await buildProgram();
  });

  it("is as wide as the terminal; in a file or pipe $COLUMNS, else unlimited", () => {
    expect(helpWidth({ isTTY: true, columns: 132 }, {})).to.equal(132);
    expect(helpWidth({ isTTY: true, columns: 132 }, { COLUMNS: "60" })).to.equal(132);
    expect(helpWidth({ isTTY: false }, { COLUMNS: "60" })).to.equal(60);
    expect(helpWidth({ isTTY: false }, { COLUMNS: "wide" })).to.equal(Number.MAX_SAFE_INTEGER);
    expect(helpWidth({}, {})).to.equal(Number.MAX_SAFE_INTEGER);
  });

  it("vc doctor --help into a pipe keeps its description on one line; with COLUMNS=100 it wraps to 100", () => {
    const doctor = program.commands.find((c) => c.name() === "doctor")!;
    const piped = helpInto(doctor, {});
    const description = piped.split("\n").find((l) => l.startsWith("check a virtual cluster"))!;
    expect(description).to.include("0 otherwise");
    expect(description.length).to.be.greaterThan(200);
    const lines = helpInto(doctor, { COLUMNS: "100" }).split("\n");
    expect(Math.max(...lines.map((l) => l.length))).to.be.at.most(100);
    expect(lines.length).to.be.greaterThan(piped.split("\n").length);
  });

  it("vc --help lists every command once, on one line of at most 100 characters, its long text in its own help", () => {
    const help = helpInto(program, {});
    const lines = help.split("\n");
    expect(lines.filter((l) => l.length > 100)).to.deep.equal([]);
    const listed = lines.slice(lines.indexOf("Commands:") + 1).filter((l) => /^ {2}\S/.test(l));
    const names = program.commands.map((c) => c.name());
    expect(listed.map((l) => l.trim().split(" ")[0]).sort()).to.deep.equal([...names, "help"].sort());
    for (const c of program.commands) {
      expect(c.summary(), c.name()).to.not.equal("");
      expect(helpInto(c, {}).replace(/\s+/g, " "), c.name()).to.include(c.description().replace(/\s+/g, " "));
    }
  });

  it("an unknown command with --help is reported as unknown, with a non-zero exit", async () => {
    const res = await runVc(["stauts", "--help"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.include("unknown command 'stauts'");
    expect(res.stdout).to.not.include("Commands:");
  });

  it("points at documentation by URL of this release, never at a path of the repository", () => {
    const commands = [...everyCommand(program), buildCommand()];
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
