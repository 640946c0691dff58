// action.yml (the GitHub Action) and this repository's own workflows: valid for the linters, pinned to the package's
// version, and the action's shell steps behave as documented when bash runs them.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { packageInfo } from "../src/model/package.js";
import { lintAction, lintWorkflow } from "./support/workflow-lint.js";

const ROOT = join(import.meta.dirname, "..");
const actionText = readFileSync(join(ROOT, "action.yml"), "utf8");

interface ActionStep {
  id?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
}
const action = load(actionText) as {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { using: string; steps: ActionStep[] };
};
const step = (id: string) => action.runs.steps.find((s) => s.id === id)!;

/** Runs one of the action's bash steps with the given env (what the runner would set), in `cwd`. */
function runStep(id: string, env: Record<string, string>, cwd: string) {
  const script = `set -e\n${step(id).run!}`; // the runner's bash invocation: bash --noprofile --norc -eo pipefail {0}
  return spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH, ...env },
  });
}

describe("action.yml", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-action-"));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it(
    "is a composite action accepted by the action metadata schema, with inputs for the command, kubeconfig " +
      "and output",
    () => {
      expect(lintAction("action.yml", actionText)).to.deep.equal([]);
      expect(action.runs.using).to.equal("composite");
      expect(Object.keys(action.inputs)).to.include.members([
        "command",
        "version",
        "kubeconfig",
        "output",
        "ok-exit-codes",
      ]);
      expect(action.inputs.command!.required).to.equal(true);
    },
  );

  it("installs by default the release of the package it belongs to", () => {
    expect(action.inputs.version!.default).to.equal(packageInfo().version);
  });

  it("passes inputs to shell code only through env:", () => {
    for (const s of action.runs.steps) if (s.run) expect(s.run, s.id).to.not.include("${{");
  });

  it("installs the package by its own scoped name (the npm name vc is an unrelated package)", () => {
    const install = step("install").run!;
    expect(packageInfo().name).to.match(/^@[a-z0-9-]+\/vc$/);
    expect(install).to.include(`--ignore-scripts "${packageInfo().name}@$VC_VERSION"`);
    expect(install).to.not.match(/["\s]vc@/);
  });

  it("refuses a version that is not an exact release before running npm", () => {
    const r = runStep(
      "install",
      { VC_VERSION: "latest; touch pwned", RUNNER_TEMP: tmp, GITHUB_OUTPUT: join(tmp, "out") },
      tmp,
    );
    expect(r.status).to.equal(2);
    expect(r.stdout).to.include("::error::vc action: input version must be an exact release");
    expect(existsSync(join(tmp, "vc-action"))).to.equal(false);
    expect(existsSync(join(tmp, "pwned"))).to.equal(false);
  });

  describe("the run step (against a stand-in vc that reports what it got)", () => {
    let bin: string;
    beforeEach(() => {
      bin = join(tmp, "bin");
      mkdirSync(bin);
      // Prints each argument on a line, the kubeconfig's mode and content, then exits with $FAKE_EXIT.
      writeFileSync(
        join(bin, "vc"),
        '#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done\nif [ -n "$KUBECONFIG" ]; then echo "kubeconfig:$KUBECONFIG"; stat -c "mode:%a" "$KUBECONFIG"; cat "$KUBECONFIG"; fi\nexit ${FAKE_EXIT:-0}\n',
      );
      chmodSync(join(bin, "vc"), 0o755);
    });
    const env = (over: Record<string, string>) => ({
      VC_BIN: bin,
      VC_COMMAND: "",
      VC_KUBECONFIG_DATA: "",
      VC_OUTPUT: "",
      VC_OK_EXIT_CODES: "0",
      RUNNER_TEMP: tmp,
      GITHUB_OUTPUT: join(tmp, "github-output"),
      ...over,
    });

    it("splits the command on whitespace without expanding anything", () => {
      writeFileSync(join(tmp, "a.yaml"), "");
      const r = runStep("run", env({ VC_COMMAND: "diff  .\n--cluster a\t*.yaml $HOME $(id) `id`" }), tmp);
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout.trim().split("\n")).to.deep.equal([
        "arg:diff",
        "arg:.",
        "arg:--cluster",
        "arg:a",
        "arg:*.yaml",
        "arg:$HOME",
        "arg:$(id)",
        "arg:`id`",
      ]);
      expect(readFileSync(join(tmp, "github-output"), "utf8")).to.equal("exit-code=0\n");
    });

    it("gives vc the kubeconfig in a 0600 file that is gone afterwards, and writes stdout to the output file", () => {
      const out = join(tmp, "plan.md");
      const r = runStep(
        "run",
        env({ VC_COMMAND: "diff --target kube", VC_KUBECONFIG_DATA: "apiVersion: v1\nkind: Config", VC_OUTPUT: out }),
        tmp,
      );
      expect(r.status, r.stderr).to.equal(0);
      const printed = readFileSync(out, "utf8");
      expect(printed).to.include("mode:600").and.to.include("apiVersion: v1\nkind: Config");
      const file = /kubeconfig:(\S+)/.exec(printed)![1]!;
      expect(file.startsWith(tmp)).to.equal(true);
      expect(existsSync(file)).to.equal(false);
      expect(readdirSync(tmp).filter((f) => f.startsWith("vc-kubeconfig"))).to.deep.equal([]);
    });

    it("fails the step on an exit code not listed as ok, and reports the exit code either way", () => {
      const drift = runStep("run", env({ VC_COMMAND: "diff --exit-code", FAKE_EXIT: "1" }), tmp);
      expect(drift.status).to.equal(1);
      expect(readFileSync(join(tmp, "github-output"), "utf8")).to.equal("exit-code=1\n");
      rmSync(join(tmp, "github-output"));
      const tolerated = runStep(
        "run",
        env({ VC_COMMAND: "diff --exit-code", FAKE_EXIT: "1", VC_OK_EXIT_CODES: "0 1" }),
        tmp,
      );
      expect(tolerated.status).to.equal(0);
      expect(readFileSync(join(tmp, "github-output"), "utf8")).to.equal("exit-code=1\n");
    });

    it("refuses an empty command", () => {
      const r = runStep("run", env({ VC_COMMAND: "  \n" }), tmp);
      expect(r.status).to.equal(2);
      expect(r.stdout).to.include("the command input is empty");
    });
  });
});

describe(".github/workflows of this repository", () => {
  it("paste no expression into shell code: values from the pull request go through env:", () => {
    const dir = join(ROOT, ".github/workflows");
    for (const f of readdirSync(dir)) {
      const w = load(readFileSync(join(dir, f), "utf8")) as {
        jobs: Record<string, { steps: Array<{ run?: string }> }>;
      };
      for (const s of Object.values(w.jobs).flatMap((j) => j.steps)) if (s.run) expect(s.run, f).to.not.include("${{");
    }
  });

  it(
    "ci.yml runs the tiers .ci/run runs, on every push and pull request: unit with the corpus, e2e with envtest's " +
      "oldest and newest",
    () => {
      type Job = {
        strategy?: { matrix?: Record<string, unknown[]> };
        steps: Array<{ run?: string; env?: Record<string, string> }>;
      };
      const ci = load(readFileSync(join(ROOT, ".github/workflows/ci.yml"), "utf8")) as {
        on: Record<string, unknown>;
        jobs: Record<string, Job>;
      };
      expect(Object.keys(ci.on)).to.include.members(["push", "pull_request"]);
      const runs = (job: Job) => job.steps.map((s) => s.run ?? "").join("\n");
      const ciRun = readFileSync(join(ROOT, ".ci/run"), "utf8");
      for (const tier of ["npm test", "npm run test:browser", "npm run test:e2e"]) {
        expect(ciRun, `.ci/run: ${tier}`).to.include(tier);
        expect(
          Object.values(ci.jobs).some((j) => runs(j).split("\n").includes(tier)),
          `ci.yml: ${tier}`,
        ).to.equal(true);
      }
      const unit = Object.values(ci.jobs).find((j) => runs(j).includes("npm test"))!;
      expect(runs(unit)).to.include("scripts/fetch-yaml-corpus.sh").and.to.include("VC_YAML_CORPUS=");
      expect(ciRun).to.include("VC_YAML_CORPUS=");
      const e2e = Object.values(ci.jobs).find((j) => runs(j).includes("npm run test:e2e"))!;
      expect(runs(e2e)).to.include("scripts/fetch-kube-assets.sh").and.to.include("VC_KUBE_ASSETS=");
      expect(e2e.strategy?.matrix?.kubernetes).to.deep.equal(["1.24.x", ""]);
      expect(ciRun).to.include("VC_KUBE_ASSETS=");
    },
  );

  it("pass actionlint and the GitHub workflow schema", async () => {
    const dir = join(ROOT, ".github/workflows");
    const findings: string[] = [];
    for (const f of readdirSync(dir)) findings.push(...(await lintWorkflow(f, readFileSync(join(dir, f), "utf8"))));
    expect(findings).to.deep.equal([]);
  });
});
