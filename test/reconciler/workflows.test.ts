// .github/workflows: valid YAML, CI runs typecheck and tests, and every `npx vc` call uses options that exist.
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { buildProgram } from "../../src/cli/main.js";

const DIR = ".github/workflows";

interface Workflow {
  on: unknown;
  jobs: Record<string, { steps: Array<{ run?: string; uses?: string; if?: string }> }>;
}

const workflows = Object.fromEntries(
  readdirSync(DIR).map((f) => [f, load(readFileSync(join(DIR, f), "utf8")) as Workflow]),
);
const runs = (w: Workflow): string[] => Object.values(w.jobs).flatMap((j) => j.steps.map((s) => s.run ?? ""));

describe(".github/workflows", () => {
  it("has ci, pull-request and drift workflows", () => {
    expect(Object.keys(workflows).sort()).to.deep.equal(["ci.yml", "drift.yml", "pull-request.yml"]);
  });

  it("ci installs with npm ci, typechecks and runs the tests on push and pull requests", () => {
    const ci = workflows["ci.yml"]!;
    expect(Object.keys(ci.on as object).sort()).to.deep.equal(["pull_request", "push"]);
    const text = runs(ci).join("\n");
    for (const cmd of ["npm ci", "npm run typecheck", "npm test"]) expect(text).to.include(cmd);
  });

  it(
    "pull requests validate with annotations and post a markdown plan; drift runs on a schedule with " + "--exit-code",
    () => {
      const pr = runs(workflows["pull-request.yml"]!).join("\n");
      expect(pr).to.include("vc validate --format github");
      expect(pr).to.match(/vc(\.js)? diff .*-o markdown/);
      expect(pr)
        .to.match(/--target kube/)
        .and.to.match(/--target "dir:/);
      const drift = workflows["drift.yml"]!;
      expect(Object.keys(drift.on as object)).to.include("schedule");
      expect(runs(drift).join("\n")).to.match(/vc diff .*--exit-code/);
    },
  );

  it("calls vc only with commands and options that exist", async () => {
    const program = await buildProgram();
    let calls = 0;
    for (const [file, w] of Object.entries(workflows)) {
      for (const line of runs(w).flatMap((r) => r.split("\n"))) {
        const m = /(?:npx vc|node bin\/vc\.js) (\S+)(.*)$/.exec(line);
        if (!m) continue;
        calls++;
        const cmd = program.commands.find((c) => c.name() === m[1]);
        expect(cmd, `${file}: vc ${m[1]}`).to.not.equal(undefined);
        const known = new Set(cmd!.options.flatMap((o) => [o.long, o.short]));
        for (const flag of m[2]!.split(/\s+/).filter((t) => /^--?[a-z]/.test(t))) {
          expect(known.has(flag), `${file}: vc ${m[1]} ${flag}`).to.equal(true);
        }
      }
    }
    expect(calls).to.be.greaterThan(3);
  });
});
