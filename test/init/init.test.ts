// vc init: the scaffolded fleet validates, its workflows pass actionlint and the workflow schema, it never overwrites,
// and deploy/ builds with the real kubectl kustomize pointed at the repository.
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load, loadAll } from "js-yaml";
import { httpsRemote } from "../../src/init/index.js";
import { packageInfo } from "../../src/model/package.js";
import { runVc } from "../support/vc.js";
import { lintWorkflow } from "../support/workflow-lint.js";

const { version, name: packageName } = packageInfo();
const ACTION = `vc-project/vc@v${version}`;

interface Step {
  run?: string;
  uses?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
}
interface Workflow {
  jobs: Record<string, { steps: Step[] }>;
}

/** The files under dir, the .git folder vc init makes left out. */
function tree(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .filter((e) => !(prefix === "" && e.name === ".git"))
    .flatMap((e) => (e.isDirectory() ? tree(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

describe("vc init", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-init-"));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const init = (dir: string, extra: string[] = []) =>
    runVc(["init", dir, "--repo-url", "https://github.com/acme/fleet.git", "--owners", "@acme/platform", ...extra]);

  it(
    "scaffolds a fleet that passes vc validate without a warning, and vc render renders its example " + "cluster",
    async () => {
      const dir = join(tmp, "fleet");
      const r = await init(dir);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include("wrote clusters/example/values.yaml");
      const v = await runVc(["validate", dir, "--format", "json"]);
      expect(v.code, v.stdout + v.stderr).to.equal(0);
      const report = JSON.parse(v.stdout) as { valid: boolean; diagnostics: unknown[]; clusters: unknown[] };
      expect(report.valid).to.equal(true);
      expect(report.diagnostics).to.deep.equal([]);
      expect(report.clusters).to.have.length(1);
      const rendered = await runVc(["render", dir]);
      expect(rendered.code, rendered.stderr).to.equal(0);
      const names = (
        loadAll(rendered.stdout) as Array<{ kind: string; metadata: { name: string; namespace?: string } }>
      ).map((o) => `${o.kind}/${o.metadata.name}`);
      expect(names).to.include.members(["Namespace/vc-example", "StatefulSet/example"]);
    },
  );

  it(
    "writes exactly the listed files: workflows, CODEOWNERS, the example cluster, deploy/ and " + "package.json",
    async () => {
      const dir = join(tmp, "fleet");
      const r = await init(dir, ["--cluster", "team-a"]);
      const listed = r.stdout
        .trim()
        .split("\n")
        .map((l) => l.replace(/^wrote /, ""));
      expect(tree(dir)).to.deep.equal([...listed].sort());
      expect(listed).to.include.members([
        ".github/CODEOWNERS",
        ".github/workflows/vc-validate.yml",
        ".github/workflows/vc-plan.yml",
        ".github/workflows/vc-drift.yml",
        "clusters/team-a/values.yaml",
        "clusters/team-a/cluster.yaml",
        "deploy/kustomization.yaml",
        "deploy/ci-reader.yaml",
        "deploy/vc-reconciler/deployment.yaml",
        "deploy/vc-reconciler/rbac.yaml",
        "package.json",
        "policy.yaml",
      ]);
      expect(readFileSync(join(dir, ".github/CODEOWNERS"), "utf8")).to.match(/^\/policy\.yaml\s+@/m);
      expect(readFileSync(join(dir, "policy.yaml"), "utf8").split("\n")[0]).to.equal(
        `# yaml-language-server: $schema=./node_modules/${packageName}/schemas/policy.schema.json`,
      );
      expect(listed.some((f) => f.includes("@@") || f.includes("dot-"))).to.equal(false);
      for (const f of listed) expect(readFileSync(join(dir, f), "utf8"), f).to.not.include("@@");
    },
  );

  it(
    "pins everything to the vc version that wrote it: the action's tag, the schema lines and " + "package.json",
    async () => {
      const dir = join(tmp, "fleet");
      await init(dir);
      const values = readFileSync(join(dir, "clusters/example/values.yaml"), "utf8");
      expect(values.split("\n")[0]).to.equal(
        `# yaml-language-server: $schema=../../node_modules/${packageName}/schemas/values.schema.json`,
      );
      expect(readFileSync(join(dir, "clusters/example/cluster.yaml"), "utf8").split("\n")[0]).to.equal(
        `# yaml-language-server: $schema=../../node_modules/${packageName}/schemas/cluster.schema.json`,
      );
      // The schema the line names is the one this vc validates with (what npm install puts under node_modules/).
      expect(existsSync(join(import.meta.dirname, "../../schemas/values.schema.json"))).to.equal(true);
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      };
      expect(pkg.devDependencies).to.deep.equal({ [packageName]: version });
      let vcSteps = 0;
      for (const f of readdirSync(join(dir, ".github/workflows"))) {
        const w = load(readFileSync(join(dir, ".github/workflows", f), "utf8")) as Workflow;
        for (const step of Object.values(w.jobs).flatMap((j) => j.steps)) {
          if (step.uses?.startsWith("vc-project/")) {
            vcSteps++;
            expect(step.uses, f).to.equal(ACTION);
          }
        }
      }
      expect(vcSteps).to.equal(5);
    },
  );

  it("writes workflows that actionlint and the GitHub workflow schema accept", async () => {
    const dir = join(tmp, "fleet");
    await init(dir);
    const findings: string[] = [];
    for (const f of readdirSync(join(dir, ".github/workflows"))) {
      findings.push(...(await lintWorkflow(f, readFileSync(join(dir, ".github/workflows", f), "utf8"))));
    }
    expect(findings).to.deep.equal([]);
  });

  it("the linters do find problems (a check that cannot fail proves nothing)", async () => {
    const bad =
      "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ " +
      "github.event.pull_request.title }}\n";
    expect((await lintWorkflow("bad.yml", bad)).join("\n")).to.match(/potentially untrusted/);
    expect(await lintWorkflow("bad2.yml", "on: push\njobs:\n  a:\n    steps: 3\n")).to.not.deep.equal([]);
  });

  it(
    "is secure by construction: no expression inside shell code or scripts, vc never from the checkout, checkout " +
      "without credentials",
    async () => {
      const dir = join(tmp, "fleet");
      await init(dir);
      for (const f of readdirSync(join(dir, ".github/workflows"))) {
        const text = readFileSync(join(dir, ".github/workflows", f), "utf8");
        expect(text, f).to.not.match(/npm (ci|install)|npx |node_modules/);
        const w = load(text) as Workflow;
        for (const step of Object.values(w.jobs).flatMap((j) => j.steps)) {
          if (step.run) expect(step.run, `${f}: run`).to.not.include("${{");
          if (step.with?.script) expect(step.with.script, `${f}: script`).to.not.include("${{");
          if (step.uses?.startsWith("actions/checkout")) expect(step.with?.["persist-credentials"], f).to.equal(false);
          if (step.with?.kubeconfig)
            expect(step.uses, `${f}: the kubeconfig goes only to the pinned action`).to.equal(ACTION);
        }
      }
    },
  );

  it("refuses to overwrite an existing file and then writes nothing at all", async () => {
    const dir = join(tmp, "fleet");
    execFileSync("mkdir", ["-p", join(dir, ".github")]);
    writeFileSync(join(dir, ".github/CODEOWNERS"), "* @someone\n");
    const r = await init(dir);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/refusing to overwrite 1 existing file .*\.github\/CODEOWNERS/);
    expect(r.stderr).to.not.match(/at .*\.ts:\d+/);
    expect(tree(dir)).to.deep.equal([".github/CODEOWNERS"]);
    expect(readFileSync(join(dir, ".github/CODEOWNERS"), "utf8")).to.equal("* @someone\n");
  });

  it(
    "makes the folder a git repository on the followed branch and commits nothing; its closing words say so and " +
      "what to run",
    async () => {
      const dir = join(tmp, "fleet");
      const r = await runVc(
        [
          "init",
          dir,
          "--repo-url",
          "https://github.com/acme/fleet.git",
          "--owners",
          "@acme/platform",
          "--branch",
          "trunk",
        ],
        {
          env: { npm_command: "" },
          cwd: tmp,
        },
      );
      expect(r.code, r.stderr).to.equal(0);
      expect(execFileSync("git", ["-C", dir, "symbolic-ref", "HEAD"], { encoding: "utf8" }).trim()).to.equal(
        "refs/heads/trunk",
      );
      expect(spawnSync("git", ["-C", dir, "rev-parse", "--verify", "-q", "HEAD"]).status).to.not.equal(0);
      expect(r.stderr).to.include(
        `files in ${dir}; made it a new git repository (branch trunk) and committed nothing.`,
      );
      const next = r.stderr
        .split("\n")
        .filter((l) => l.startsWith("  "))
        .map((l) => l.split(" #")[0]!.trim());
      expect(next).to.deep.equal([
        "cd fleet",
        "vc validate",
        "vc render",
        "vc apply",
        "vc diff",
        "git add -A",
        'git commit -m "A fleet of virtual clusters"',
        "git remote add origin https://github.com/acme/fleet.git",
        "git push -u origin trunk",
      ]);
    },
  );

  it(
    "in a git repository, uses it: no repository of its own, no remote to add; run through npx, its commands go " +
      "through npx by the package's name",
    async () => {
      const dir = join(tmp, "fleet");
      execFileSync("git", ["init", "-q", "-b", "main", dir]);
      execFileSync("git", ["-C", dir, "remote", "add", "origin", "git@github.com:acme/fleet.git"]);
      const head = readFileSync(join(dir, ".git/HEAD"), "utf8");
      const r = await runVc(["init", dir, "--owners", "@acme/platform"], { env: { npm_command: "exec" }, cwd: dir });
      expect(r.code, r.stderr).to.equal(0);
      expect(readFileSync(join(dir, ".git/HEAD"), "utf8")).to.equal(head);
      expect(r.stderr).to.include("in an existing git repository, committed nothing.");
      const next = r.stderr
        .split("\n")
        .filter((l) => l.startsWith("  "))
        .map((l) => l.split(" #")[0]!.trim());
      expect(next).to.deep.equal([
        `npx ${packageName} validate`,
        `npx ${packageName} render`,
        `npx ${packageName} apply`,
        `npx ${packageName} diff`,
        "git add -A",
        'git commit -m "A fleet of virtual clusters"',
        "git push -u origin main",
      ]);
    },
  );

  it("--dry-run lists the same files and writes nothing, not even the folder", async () => {
    const dir = join(tmp, "fleet");
    const dry = await init(dir, ["--dry-run"]);
    expect(dry.code).to.equal(0);
    expect(existsSync(dir)).to.equal(false);
    const real = await init(dir);
    expect(dry.stdout.replaceAll("would write ", "")).to.equal(real.stdout.replaceAll("wrote ", ""));
  });

  it("rejects invalid options as user errors (exit 1), writing nothing", async () => {
    for (const [flag, value, message] of [
      ["--cluster", "Team_A", /invalid --cluster "Team_A"/],
      ["--repo-url", "https://user:pw@github.com/a/b.git", /without credentials/],
      ["--owners", "platform team", /invalid --owners/],
      ["--action-ref", "evil$(id)@v1", /invalid --action-ref/],
      ["--branch", "-x", /invalid --branch/],
    ] as const) {
      const r = await runVc([
        "init",
        join(tmp, "f"),
        "--repo-url",
        "https://github.com/a/b.git",
        "--owners",
        "@a/b",
        flag,
        value,
      ]);
      expect(r.code, `${flag} ${value}`).to.equal(1);
      expect(r.stderr).to.match(message);
    }
    expect(existsSync(join(tmp, "f"))).to.equal(false);
  });

  it(
    "takes the reconciler's repository from the git remote origin (scp-style remotes become https) and says when " +
      "it has none",
    async () => {
      const dir = join(tmp, "fleet");
      execFileSync("git", ["init", "-q", dir]);
      execFileSync("git", ["-C", dir, "remote", "add", "origin", "git@github.com:acme/fleet.git"]);
      const r = await runVc(["init", dir]);
      expect(r.code, r.stderr).to.equal(0);
      expect(readFileSync(join(dir, "deploy/kustomization.yaml"), "utf8")).to.include(
        'value: "https://github.com/acme/fleet.git"',
      );
      expect(r.stderr).to.include("no --owners");
      const bare = await runVc(["init", join(tmp, "plain"), "--owners", "@a/b"]);
      expect(bare.stderr).to.include("no --repo-url and no git remote");
      expect(httpsRemote("ssh://git@git.example.com:2222/org/repo.git")).to.equal(
        "https://git.example.com/org/repo.git",
      );
      expect(httpsRemote("https://token@github.com/org/repo.git")).to.equal("https://github.com/org/repo.git");
      expect(httpsRemote("/srv/git/repo")).to.equal(undefined);
    },
  );

  it("deploy/ builds with kubectl kustomize: the reconciler follows this repository, CI reads only", async function () {
    this.timeout(60000);
    const dir = join(tmp, "fleet");
    await init(dir, ["--branch", "production"]);
    const objects = loadAll(
      execFileSync("kubectl", ["kustomize", join(dir, "deploy")], { encoding: "utf8" }),
    ) as Array<{
      kind: string;
      metadata: { name: string };
      spec?: { template: { spec: { containers: Array<{ args: string[] }> } } };
      rules?: Array<{ resources: string[]; verbs: string[] }>;
    }>;
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === "vc-reconciler")!;
    const args = deployment.spec!.template.spec.containers[0]!.args;
    expect(args.slice(0, 5)).to.deep.equal([
      "reconcile",
      "--repo",
      "https://github.com/acme/fleet.git",
      "--branch",
      "production",
    ]);
    const reader = objects.find((o) => o.kind === "ClusterRole" && o.metadata.name === "vc-ci-reader")!;
    const writer = objects.find((o) => o.kind === "ClusterRole" && o.metadata.name === "vc-reconciler")!;
    expect(reader.rules!.flatMap((r) => r.resources)).to.deep.equal(writer.rules!.flatMap((r) => r.resources));
    expect([...new Set(reader.rules!.flatMap((r) => r.verbs))].sort()).to.deep.equal(["get", "list", "watch"]);
    expect(
      objects
        .filter((o) => o.kind === "ClusterRoleBinding")
        .map((o) => o.metadata.name)
        .sort(),
    ).to.deep.equal(["vc-ci-reader", "vc-reconciler", "vc-reconciler-auth-delegator", "vc-reconciler-grants"]);
    // A newer copy of the manifests that moved the arguments makes kustomize stop instead of patching the wrong one.
    const deploymentFile = join(dir, "deploy/vc-reconciler/deployment.yaml");
    writeFileSync(
      deploymentFile,
      readFileSync(deploymentFile, "utf8").replace("- reconcile\n", "- reconcile\n            - --once\n"),
    );
    const moved = spawnSync("kubectl", ["kustomize", join(dir, "deploy")], { encoding: "utf8" });
    expect(moved.status).to.not.equal(0);
    expect(moved.stderr).to.match(/test/i);
  });
});

describe("vc init: the CI identity of deploy/ci-reader.yaml", () => {
  it("is enough for vc diff --exit-code against a host, and cannot apply", async function () {
    this.timeout(60000);
    const { startKubeServer } = await import("../support/kube-server/index.js");
    const tmp = mkdtempSync(join(tmpdir(), "vc-init-ci-"));
    const server = await startKubeServer();
    try {
      const dir = join(tmp, "fleet");
      await runVc(["init", dir, "--repo-url", "https://github.com/acme/fleet.git", "--owners", "@acme/platform"]);
      const objects = loadAll(readFileSync(join(dir, "deploy/ci-reader.yaml"), "utf8")) as Array<{
        kind: string;
        rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
      }>;
      server.addUser(
        "ci",
        objects.find((o) => o.kind === "ClusterRole")!.rules!,
        "system:serviceaccount:vc-system:vc-ci-reader",
      );
      const ci = server.writeKubeconfig({ token: "ci" });
      const applied = await runVc(["apply", dir, "--target", "kube", "--kubeconfig", server.kubeconfigPath]);
      expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
      const clean = await runVc(["diff", dir, "--prune", "--target", "kube", "--kubeconfig", ci, "--exit-code"]);
      expect(clean.code, clean.stdout + clean.stderr).to.equal(0);
      expect(server.countRequests({ user: "system:serviceaccount:vc-system:vc-ci-reader" })).to.be.greaterThan(0);
      const valuesFile = join(dir, "clusters/example/values.yaml");
      writeFileSync(
        valuesFile,
        readFileSync(valuesFile, "utf8").replace(
          "controlPlane:\n  statefulSet:\n",
          "controlPlane:\n  statefulSet:\n    replicas: 2\n",
        ),
      );
      const drift = await runVc(["diff", dir, "--prune", "--target", "kube", "--kubeconfig", ci, "--exit-code"]);
      expect(drift.code, drift.stderr).to.equal(1);
      const write = await runVc(["apply", dir, "--target", "kube", "--kubeconfig", ci]);
      expect(write.code, write.stdout + write.stderr).to.equal(2);
      expect(write.stdout + write.stderr).to.match(/forbidden/i);
    } finally {
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("vc init: the plan workflow's changed-clusters step", () => {
  it(
    "passes on only folder names that are valid cluster names, as --cluster arguments, and lists " + "removed ones",
    async () => {
      const tmp = mkdtempSync(join(tmpdir(), "vc-init-changed-"));
      try {
        const dir = join(tmp, "fleet");
        await runVc(["init", dir, "--repo-url", "https://github.com/a/b.git", "--owners", "@a/b", "--cluster", "gone"]);
        const git = (...args: string[]) =>
          execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { encoding: "utf8" });
        git("init", "-q");
        git("add", "-A");
        git("commit", "-qm", "base");
        const base = git("rev-parse", "HEAD").trim();
        rmSync(join(dir, "clusters/gone"), { recursive: true });
        for (const name of ["shop", "$(touch pwned)", "a b", "--target=kube", "Upper"]) {
          execFileSync("mkdir", ["-p", join(dir, "clusters", name)]);
          writeFileSync(join(dir, "clusters", name, "values.yaml"), "{}\n");
        }
        git("add", "-A");
        git("commit", "-qm", "change");
        const w = load(readFileSync(join(dir, ".github/workflows/vc-plan.yml"), "utf8")) as Workflow;
        const step = w.jobs.plan!.steps.find((s) => (s as { id?: string }).id === "changed")!;
        const out = join(tmp, "github-output");
        const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run!], {
          cwd: dir,
          encoding: "utf8",
          env: { PATH: process.env.PATH, BASE_SHA: base, RUNNER_TEMP: tmp, GITHUB_OUTPUT: out },
        });
        expect(r.status, r.stderr).to.equal(0);
        expect(readFileSync(out, "utf8")).to.equal("args=--cluster shop\nremoved=gone\n");
        expect(existsSync(join(dir, "pwned"))).to.equal(false);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  );
});
