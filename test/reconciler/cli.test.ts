// `vc reconcile --once`, `vc status` and `vc history` as a user runs them: the CLI in-process, and once in a child
// process.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startGitServer, TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";

const MAIN = resolve("src/cli/main.ts");
/** tsx resolved from here: the CLI runs in other folders (the test repositories). */
const TSX = import.meta.resolve("tsx");

/** Runs the CLI in this process with the working directory `cwd`, capturing its output. */
const vc = (cwd: string, ...args: string[]) => runVc(args, { cwd });

/** The real command line in a child process. */
function vcProcess(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      ["--import", TSX, MAIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: "1" } },
      (err, stdout, stderr) => {
        res({ code: err ? ((err as { code?: number }).code ?? 2) : 0, stdout, stderr });
      },
    );
  });
}

describe("vc reconcile --once, vc status, vc history", function () {
  this.timeout(60_000);
  let repo: TestRepo;
  before(() => {
    repo = new TestRepo();
    cpSync(resolve("clusters"), join(repo.work, "clusters"), { recursive: true });
    repo.commit("example fleet");
  });
  after(() => repo.dispose());

  it("reconciles the example into a dir: target, prints plan and result, and is a no-op the second time", async () => {
    const first = await vc(repo.work, "reconcile", "--once", "--target", "dir:out");
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/\+ create StatefulSet vc-minimal\/minimal/);
    expect(first.stdout).to.match(/minimal: applied at [0-9a-f]{12}: \d+ created/);
    expect(first.stdout).to.match(/reconciled 3 clusters at [0-9a-f]{12} in \d+ ms: 3 applied/);
    const results = first.stdout
      .split("\n")
      .filter((l) => /^[a-z]+: applied at /.test(l))
      .map((l) => l.split(":")[0]);
    expect(results).to.deep.equal(["bookinfo", "minimal", "platform"]); // sorted, whatever order they finished in
    const second = await vc(repo.work, "reconcile", "--once", "--target", "dir:out", "-o", "json");
    const data = JSON.parse(second.stdout) as {
      revision: string;
      clusters: Array<{ cluster: string; result: string; changes: unknown[] }>;
    };
    expect(data.revision).to.equal(repo.head());
    expect(data.clusters.map((c) => [c.cluster, c.result, c.changes.length])).to.deep.equal([
      ["bookinfo", "applied", 0],
      ["minimal", "applied", 0],
      ["platform", "applied", 0],
    ]);
  });

  it("exits 1 when a cluster is invalid, keeps its last good objects, and status says why", async () => {
    const file = join(repo.work, "clusters/minimal/values.yaml");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace(/cpu: 200m/, "cpu: [oops"));
    repo.commit("break minimal");
    const res = await vc(repo.work, "reconcile", "--once", "--target", "dir:out");
    expect(res.code).to.equal(1);
    expect(res.stdout).to.match(/minimal: invalid at [0-9a-f]{12}: invalid: clusters\/minimal\/values.yaml:\d+:\d+/);
    expect(readFileSync(join(repo.work, "out/minimal/vc-minimal/statefulset.apps_minimal.yaml"), "utf8")).to.include(
      "cpu: 200m",
    );

    const table = await vc(repo.work, "status", "--target", "dir:out");
    expect(table.code).to.equal(1);
    expect(table.stdout.split("\n")[0]).to.match(/^CLUSTER\s+NAMESPACE\s+RESULT\s+APPLIED\s+APPLIED BY\s+ATTEMPTED/);
    expect(table.stdout).to.match(/minimal\s+vc-minimal\s+invalid\s+[0-9a-f]{12}\s+reconciler\s+[0-9a-f]{12}/);
    const one = await vc(repo.work, "status", "--target", "dir:out", "--cluster", "minimal", "-o", "yaml");
    expect(one.stdout).to.include("result: invalid").and.to.include("stays live");

    const hist = await vc(repo.work, "history", "minimal", "--target", "dir:out", "-o", "json");
    expect(hist.code, hist.stderr).to.equal(0);
    const h = JSON.parse(hist.stdout) as {
      entries: Array<{ subject: string; live: boolean; reconciliations: Array<{ result: string }> }>;
    };
    expect(h.entries.map((e) => [e.subject, e.live, e.reconciliations.map((r) => r.result)])).to.deep.equal([
      ["break minimal", false, ["invalid"]],
      ["example fleet", true, ["applied"]],
    ]);
    // The same history from the remote (cloned into a cache) instead of the local folder.
    const server = await startGitServer(repo.root);
    try {
      const tmp = mkdtempSync(join(tmpdir(), "vc-hist-"));
      const remote = await vc(
        repo.work,
        "history",
        "minimal",
        "--repo",
        `${server.url}/${repo.path}`,
        "--cache-dir",
        join(tmp, "cache"),
        "--target",
        "dir:out",
      );
      expect(remote.code, remote.stderr).to.equal(0);
      expect(remote.stdout).to.match(/^minimal: live revision [0-9a-f]{12}\n/);
      expect(remote.stdout).to.match(/break minimal\s+invalid /);
      expect(remote.stdout).to.match(/example fleet\s+LIVE applied /);
      rmSync(tmp, { recursive: true, force: true });
    } finally {
      await server.close();
    }

    writeFileSync(file, good);
    repo.commit("fix minimal");
    expect((await vc(repo.work, "reconcile", "--once", "--target", "dir:out")).code).to.equal(0);
  });

  it("gives a clear error without a stack trace for a bad target, repo or duration", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-cli-"));
    try {
      const bad = await vc(repo.work, "reconcile", "--once", "--target", "nowhere");
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/^error: unknown target "nowhere"/);
      const noRepo = await vc(tmp, "reconcile", "--once", "--target", "dir:out");
      expect(noRepo.stderr).to.match(/^error: no clusters\/ folder/);
      const dur = await vc(repo.work, "reconcile", "--interval", "soon");
      expect(dur.stderr).to.match(/^error: invalid duration "soon"/);
      const remote = await vcProcess(
        repo.work,
        "reconcile",
        "--once",
        "--repo",
        "http://127.0.0.1:1/x.git",
        "--cache-dir",
        join(tmp, "c"),
        "--target",
        "dir:out",
      );
      expect(remote.code).to.equal(2);
      expect(remote.stderr).to.match(/^error: cannot fetch main from http:\/\/127.0.0.1:1\/x.git: ECONNREFUSED/);
      for (const r of [bad, noRepo, dur, remote]) expect(r.stderr).to.not.match(/\n\s+at /);
      const help = await vc(repo.work, "reconcile", "--help");
      expect(help.stdout)
        .to.include("--leader-elect")
        .and.to.include("--webhook-secret-file")
        .and.to.include("--shard");
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
