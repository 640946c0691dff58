import { expect } from "chai";
import { load } from "js-yaml";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { startGitServer, TestRepo } from "../support/git-server.js";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const writes = (s: KubeServer) =>
  ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + s.countRequests({ method }), 0);
const SUMMARY = /^(\d+) to create, (\d+) to update, (\d+) to delete, (\d+) unchanged$/;

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1)!;
}

describe("vc diff", () => {
  let server: KubeServer;
  let repo: string;
  let kube: string[];

  beforeEach(async () => {
    server = await startKubeServer();
    repo = exampleRepo(["minimal", "bookinfo"]);
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it("shows everything to create on an empty host; --exit-code says drift", async () => {
    const plain = await runVc(["diff", repo, ...kube]);
    expect(plain.code).to.equal(0);
    const m = SUMMARY.exec(lastLine(plain.stdout))!;
    expect(Number(m[1])).to.be.greaterThan(10);
    expect(m.slice(2)).to.deep.equal(["0", "0", "0"]);
    expect(plain.stdout).to.include("+ create Namespace vc-minimal").and.include("+++ desired/Namespace vc-minimal");
    expect(plain.stdout).to.not.match(/\x1b\[/);
    expect((await runVc(["diff", repo, ...kube, "--exit-code"])).code).to.equal(1);
    expect(writes(server)).to.equal(0);
  });

  it("after apply: no diff, exit code 0, and no write requests", async () => {
    expect((await runVc(["apply", repo, ...kube])).code).to.equal(0);
    server.resetRequests();
    const res = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(lastLine(res.stdout)).to.match(/^0 to create, 0 to update, 0 to delete, \d+ unchanged$/);
    expect(writes(server)).to.equal(0);
    // One label-selected LIST per kind for the whole fleet, never one request per object; beside them one GET of the
    // records namespace (its platform mark verified).
    const reads = server.requests.filter((r) => !(r.resource === "namespaces" && r.name === "vc-system"));
    expect(server.requests.length - reads.length).to.equal(1);
    expect(reads.every((r) => r.method === "GET" && r.verb === "list")).to.equal(true);
    // vc's records read once for the whole command (its migrations, run-time suspensions and plan read the one LIST).
    expect(server.requests.filter((r) => r.resource === "configmaps" && r.namespace === "vc-system")).to.have.length(1);
  });

  it("shows drift by another writer, masks Secret values, and apply corrects it", async () => {
    await runVc(["apply", repo, ...kube]);
    const secret = server.get("v1", "Secret", "vc-minimal", "vc-config-minimal")!;
    const leaked = Buffer.from("password: hunter2\n").toString("base64");
    server.put({ ...secret, data: { "values.yaml": leaked } });
    const res = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(res.code).to.equal(1);
    expect(res.stdout).to.include("~ update Secret vc-minimal/vc-config-minimal");
    expect(res.stdout).to.include("-  values.yaml: <masked, before>").and.include("+  values.yaml: <masked, changed>");
    expect(res.stdout)
      .to.not.include(leaked)
      .and.not.include("hunter2")
      .and.not.include(secret.data!["values.yaml" as never] as string);
    expect(lastLine(res.stdout)).to.match(/^0 to create, 1 to update, 0 to delete/);
    for (const o of ["json", "markdown"])
      expect((await runVc(["diff", repo, ...kube, "-o", o])).stdout).to.not.include(leaked);
    expect((await runVc(["apply", repo, ...kube])).code).to.equal(0);
    expect((await runVc(["diff", repo, ...kube, "--exit-code"])).code).to.equal(0);
  });

  it("shows prunes only with --prune", async () => {
    await runVc(["apply", repo, ...kube]);
    rmSync(join(repo, "clusters", "bookinfo", "mesh", "ratings.yaml"));
    const without = await runVc(["diff", repo, ...kube]);
    expect(lastLine(without.stdout)).to.match(/ 0 to delete/);
    const withPrune = await runVc(["diff", repo, ...kube, "--prune", "--exit-code"]);
    expect(withPrune.code).to.equal(1);
    expect(withPrune.stdout).to.match(/- delete VirtualService team-bookinfo\/ratings-x-bookinfo-x-bookinfo\n/);
    expect(withPrune.stdout).to.match(/- delete DestinationRule team-bookinfo\/ratings-x-bookinfo-x-bookinfo\n/);
    expect(withPrune.stdout).to.include("+++ /dev/null");
  });

  it("gives JSON, YAML of the same data, and markdown", async () => {
    const json = await runVc(["diff", repo, ...kube, "-o", "json", "--cluster", "minimal"]);
    const data = JSON.parse(json.stdout);
    expect(data.clusters.map((c: { cluster: string }) => c.cluster)).to.deep.equal(["minimal"]);
    expect(data.summary.create).to.equal(data.clusters[0].changes.length);
    const whole = await runVc(["diff", repo, ...kube, "-o", "json"]);
    const yaml = await runVc(["diff", repo, ...kube, "-o", "yaml"]);
    expect(yaml.code, yaml.stderr).to.equal(0);
    expect(load(yaml.stdout)).to.deep.equal(JSON.parse(whole.stdout));
    expect(yaml.stdout).to.match(/^clusters:\n {2}- changes:\n/m);
    const md = await runVc(["diff", repo, ...kube, "-o", "markdown"]);
    expect(md.stdout)
      .to.match(/^### vc plan\n/)
      .and.include("```diff");
  });

  it("reports an invalid cluster, plans the others, and exits 1 (2 with --exit-code)", async () => {
    const bad = exampleRepo(["minimal"], { "clusters/broken/values.yaml": "controlPlane: [\n" });
    try {
      const res = await runVc(["diff", bad, ...kube]);
      expect(res.code).to.equal(1);
      expect(res.stdout)
        .to.include("cluster minimal:")
        .and.match(/! cluster broken: clusters\/broken\/values.yaml:\d+/);
      expect((await runVc(["diff", bad, ...kube, "--exit-code"])).code).to.equal(2);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it("diffs against a dir: target, the default kind of target", async () => {
    const out = join(repo, "hydrated-out");
    expect((await runVc(["diff", repo, "--target", `dir:${out}`, "--exit-code"])).code).to.equal(1);
    expect((await runVc(["apply", repo, "--target", `dir:${out}`])).code).to.equal(0);
    expect((await runVc(["diff", repo, "--target", `dir:${out}`, "--exit-code"])).code).to.equal(0);
  });

  it("fails clearly, without a stack trace, on bad input", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["diff", repo, "--target", "kubernetes"], /unknown target "kubernetes": use kube or dir:PATH/],
      [
        ["diff", repo, "--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "nope"],
        /context "nope" not found in kubeconfig \(contexts: test\)/,
      ],
      [["diff", repo, "-o", "xml"], /unknown output format "xml"/],
      [["diff", join(repo, "..", "no-such-repo-here")], /no clusters\/ folder in .* or any folder above it/],
      [["diff", repo, "--repo", "http://127.0.0.1:1/x.git"], /either a PATH or --repo/],
    ];
    for (const [args, message] of cases) {
      const res = await runVc(args);
      expect(res.code, args.join(" ")).to.equal(2);
      expect(res.stderr)
        .to.match(message)
        .and.not.match(/\n\s+at /);
    }
  });

  it("reports an unreachable host as a runtime error (exit 2)", async () => {
    const kubeconfig = join(repo, "kubeconfig");
    writeFileSync(kubeconfig, readFileSync(server.kubeconfigPath));
    await server.close();
    const res = await runVc(["diff", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/^error: cannot reach the API server http:\/\/127\.0\.0\.1:\d+: connection refused/);
    server = await startKubeServer();
  });

  it("reads a remote repository with --repo (commit SHA as the revision) and plans it", async () => {
    const remote = new TestRepo();
    const git = await startGitServer(remote.root);
    const cache = mkdtempSync(join(tmpdir(), "vc-cache-"));
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cache;
    try {
      remote.write({
        "clusters/minimal/values.yaml": readFileSync(join(repo, "clusters", "minimal", "values.yaml"), "utf8"),
      });
      const sha = remote.commit("minimal cluster");
      const out = join(cache, "out");
      const url = `${git.url}/${remote.path}`;
      const applied = await runVc(["apply", "--repo", url, "--target", `dir:${out}`]);
      expect(applied.code, applied.stderr).to.equal(0);
      const nsFile = readFileSync(join(out, "minimal", "_cluster", "namespace_vc-minimal.yaml"), "utf8");
      expect(nsFile).to.include(`vc.orch.io/revision: ${sha}`);
      expect((await runVc(["diff", "--repo", url, "--target", `dir:${out}`, "--exit-code"])).code).to.equal(0);
      expect(readdirSync(join(cache, "vc", "repos"))).to.have.length(1);
      const gone = await runVc(["diff", "--repo", `${git.url}/missing.git`, "--target", `dir:${out}`]);
      expect(gone.code).to.equal(2);
      expect(gone.stderr).to.match(/^error: cannot fetch main from http:\/\/127\.0\.0\.1:\d+\/missing\.git/);
    } finally {
      if (previous === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = previous;
      await git.close();
      remote.dispose();
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
