// The workflows cannot be turned against the host: no expression or file name inside shell code, the job that holds
// VC_KUBECONFIG never runs the pull request's code, and hostile folder names run nothing (the steps' own shell run
// with bash over a real git repository).
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";

const ROOT = join(import.meta.dirname, "..", "..");

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
  "working-directory"?: string;
}
interface Job {
  if?: string;
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

const DIRS = [".github/workflows", "templates/fleet/dot-github/workflows"];
const workflows: Array<[string, Workflow]> = DIRS.flatMap((d) =>
  readdirSync(join(ROOT, d)).map(
    (f) =>
      [
        `${d}/${f}`,
        load(readFileSync(join(ROOT, d, f), "utf8").replace(/@@[A-Z_]+@@/g, "placeholder")) as Workflow,
      ] as [string, Workflow],
  ),
);
const own = (file: string): Workflow => workflows.find(([f]) => f === `.github/workflows/${file}`)![1];

/** Whether a step is given a secret's value (a presence test such as `secrets.X != ''` is not its value). */
const usesSecretValue = (s: Step): boolean =>
  JSON.stringify([s.env ?? {}, s.with ?? {}]).match(/secrets\.[A-Z_]+\s*}}/) !== null;

describe("security: workflows", () => {
  it(
    "put no ${{ }} expression inside shell code or github-script code, in this repository's and vc init's " +
      "workflows",
    () => {
      let checked = 0;
      for (const [file, w] of workflows) {
        for (const s of Object.values(w.jobs).flatMap((j) => j.steps)) {
          for (const code of [
            s.run,
            s.uses?.startsWith("actions/github-script") ? (s.with?.script as string) : undefined,
          ]) {
            if (code === undefined) continue;
            checked++;
            expect(code, `${file}: ${s.name ?? s.run}`).to.not.include("${{");
          }
        }
      }
      expect(checked).to.be.greaterThan(10);
    },
  );

  it("never use pull_request_target or workflow_run (they give a fork's pull request the repository's secrets)", () => {
    for (const [file, w] of workflows)
      expect(Object.keys(w.on), file).to.not.include.members(["pull_request_target", "workflow_run"]);
  });

  it(
    "the pull-request job holding VC_KUBECONFIG runs vc of the base branch only: the pull request is checked out " +
      "as input, nothing of it is installed or run",
    () => {
      const w = own("pull-request.yml");
      const holders = Object.entries(w.jobs).filter(([, j]) => j.steps.some(usesSecretValue));
      expect(holders.map(([n]) => n)).to.deep.equal(["plan"]);
      const job = holders[0]![1];
      const checkouts = job.steps.filter((s) => s.uses?.startsWith("actions/checkout"));
      expect(checkouts.map((s) => s.with)).to.deep.equal([
        { ref: "${{ github.event.pull_request.base.sha }}", path: "base", "persist-credentials": false },
        { path: "pr", "fetch-depth": 0, "persist-credentials": false },
      ]);
      for (const s of job.steps) {
        if (s.uses?.startsWith("actions/setup-node"))
          expect(s.with, "no shared npm cache a pull request could fill").to.not.have.property("cache");
        if (!s.run) continue;
        expect(s.run, s.name).to.not.match(/\bnpx\b/); // npx resolves from the working directory
        if (/\b(npm|node)\b/.test(s.run)) expect(s["working-directory"], s.name).to.equal("base");
        for (const m of s.run.matchAll(/\bnode (\S+)/g)) expect(m[1], s.name).to.equal("bin/vc.js");
        if (usesSecretValue(s)) expect(s.run, s.name).to.include('"$GITHUB_WORKSPACE/pr"');
      }
      // The job that runs the pull request's code has no secret and cannot write to the pull request.
      const validate = w.jobs.validate!;
      expect(validate.steps.some(usesSecretValue)).to.equal(false);
      expect(JSON.stringify(validate)).to.not.include("secrets.");
      expect((validate as unknown as { permissions: unknown }).permissions).to.deep.equal({ contents: "read" });
    },
  );

  it(
    "drift gets the kubeconfig only on the default branch (a manual run on another branch would run that " +
      "branch's code)",
    () => {
      const job = own("drift.yml").jobs.drift!;
      expect(job.if).to.equal("github.ref == format('refs/heads/{0}', github.event.repository.default_branch)");
      expect(job.steps.find((s) => s.uses?.startsWith("actions/checkout"))!.with).to.deep.equal({
        "persist-credentials": false,
      });
    },
  );

  describe("hostile folder names in a pull request run nothing", () => {
    let tmp: string;
    let pr: string;
    let base: string;
    let marker: string;
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", pr, ...args], {
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@e",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@e",
        },
      });
    const step = (name: string): Step => own("pull-request.yml").jobs.plan!.steps.find((s) => s.name === name)!;
    const bash = (script: string, cwd: string, env: Record<string, string>) =>
      spawnSync("bash", ["-e", "-c", script], {
        cwd,
        encoding: "utf8",
        env: { PATH: process.env.PATH!, HOME: tmp, ...env },
      });

    before(() => {
      tmp = mkdtempSync(join(tmpdir(), "vc-wf-"));
      marker = join(tmp, "PWNED");
      pr = join(tmp, "pr");
      base = join(tmp, "base");
      mkdirSync(join(pr, "clusters", "gone"), { recursive: true });
      writeFileSync(join(pr, "clusters", "gone", "values.yaml"), "{}\n");
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "base");
      const hostile = [
        `$(touch ${marker}).md`,
        `\`touch ${marker}\``,
        `a;touch ${marker}`,
        "--help",
        "x y",
        "good",
        "Bad_Name",
        "$(id)",
      ];
      for (const h of hostile) {
        mkdirSync(join(pr, "clusters", h), { recursive: true });
        writeFileSync(join(pr, "clusters", h, "values.yaml"), "{}\n");
      }
      writeFileSync(join(pr, "clusters", "$(id).md"), "hi\n");
      writeFileSync(join(pr, "clusters", `$(touch ${marker})`), "hi\n");
      git("rm", "-rq", "clusters/gone");
      git("add", "-A");
      git("commit", "-qm", "pr");
      // A stand-in for the base branch's vc: records its arguments.
      mkdirSync(join(base, "bin"), { recursive: true });
      writeFileSync(
        join(base, "bin", "vc.js"),
        `require("fs").appendFileSync(${JSON.stringify(join(tmp, "argv"))}, JSON.stringify(process.argv.slice(2)) ` +
          `+ "\\n"); process.stdout.write("plan\\n");\n`,
      );
    });
    after(() => rmSync(tmp, { recursive: true, force: true }));

    it(
      "Changed clusters passes on valid cluster names only, lists a folder renamed away as removed, and " +
        "nothing runs",
      () => {
        const baseSha = git("rev-parse", "HEAD~1").trim();
        writeFileSync(join(tmp, "out"), "");
        const r = bash(step("Changed clusters").run!, pr, {
          BASE_SHA: baseSha,
          RUNNER_TEMP: tmp,
          GITHUB_OUTPUT: join(tmp, "out"),
        });
        expect(r.status, r.stderr).to.equal(0);
        expect(readFileSync(join(tmp, "out"), "utf8"), r.stderr).to.equal("present=good\nremoved=gone\n");
        expect(existsSync(marker)).to.equal(false);
        // vc init's plan workflow does the same.
        const template = workflows
          .find(([f]) => f.endsWith("vc-plan.yml"))![1]
          .jobs.plan!.steps.find((s) => s.name === "Changed clusters")!;
        writeFileSync(join(tmp, "out"), "");
        const t = bash(template.run!, pr, { BASE_SHA: baseSha, RUNNER_TEMP: tmp, GITHUB_OUTPUT: join(tmp, "out") });
        expect(t.status, t.stderr).to.equal(0);
        expect(readFileSync(join(tmp, "out"), "utf8")).to.equal("args=--cluster good\nremoved=gone\n");
        expect(existsSync(marker)).to.equal(false);
      },
    );

    it(
      "the plan steps hand exactly those names to the base branch's vc, with the pull request's folder as input; " +
        "the kubeconfig file is 0600 and removed",
      () => {
        const env = { PRESENT: "good", BASE_REF: "main", RUNNER_TEMP: tmp, GITHUB_WORKSPACE: tmp };
        const dirPlan = bash(step("Plan against the base branch's rendered manifests").run!, base, env);
        expect(dirPlan.status, dirPlan.stderr).to.equal(0);
        const hostile = `apiVersion: v1\n# $(touch ${marker})\n`;
        // Watch the kubeconfig while vc runs: the stand-in reports the file's mode.
        writeFileSync(
          join(base, "bin", "vc.js"),
          `const fs = require("fs"); const k = process.argv[process.argv.indexOf("--kubeconfig") + 1]; ` +
            `fs.appendFileSync(${JSON.stringify(join(tmp, "argv"))}, JSON.stringify([...process.argv.slice(2), ` +
            `(fs.statSync(k).mode & 0o777).toString(8), fs.readFileSync(k, "utf8")]) + "\\n");\n`,
        );
        const live = bash(step("Plan against the live host").run!, base, { ...env, VC_KUBECONFIG: hostile });
        expect(live.status, live.stderr).to.equal(0);
        const calls = readFileSync(join(tmp, "argv"), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as string[]);
        expect(calls[0]).to.deep.equal([
          "diff",
          join(tmp, "pr"),
          "--cluster",
          "good",
          "--prune",
          "--target",
          `dir:${tmp}/hydrated`,
          "-o",
          "markdown",
        ]);
        expect(calls[1]).to.deep.equal([
          "diff",
          join(tmp, "pr"),
          "--cluster",
          "good",
          "--prune",
          "--target",
          "kube",
          "--kubeconfig",
          `${tmp}/kubeconfig`,
          "-o",
          "markdown",
          "600",
          hostile,
        ]);
        expect(existsSync(join(tmp, "kubeconfig"))).to.equal(false);
        expect(existsSync(marker)).to.equal(false);
        expect(readFileSync(join(tmp, "plan.md"), "utf8")).to.include(
          "_Planned against the live host (vc of `main`)._",
        );
        expect(statSync(join(tmp, "plan.md")).isFile()).to.equal(true);
      },
    );
  });
});
