// An unknown cluster name on the command line: every command that takes one answers with the same exit code (1) and
// the same message shape, and changes nothing; a name the repository or the host does know is not "unknown".
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const WRITES = ["PATCH", "PUT", "POST", "DELETE"];

describe("cli: an unknown cluster name gives the same exit code and message shape in every command", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: string;
  let tmp: string;
  let kube: string[];
  let host: string[];

  before(async () => {
    server = await startKubeServer();
    repo = exampleRepo(["minimal", "bookinfo"]);
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fleet");
    tmp = mkdtempSync(join(tmpdir(), "vc-unknown-"));
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath];
    host = ["--kubeconfig", server.kubeconfigPath, "--repo", repo];
  });
  after(async () => {
    await server?.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  const commands = (): Array<[string, string[]]> => [
    ["validate", ["validate", repo, "--cluster", "nope"]],
    ["render", ["render", repo, "--cluster", "nope"]],
    ["diff", ["diff", repo, "--cluster", "nope", ...kube]],
    ["apply", ["apply", repo, "--cluster", "nope", ...kube]],
    ["apply --dry-run", ["apply", repo, "--cluster", "nope", "--dry-run", ...kube]],
    ["adopt", ["adopt", "nope", repo, "--from", "another-source", ...kube]],
    ["status", ["status", "--cluster", "nope", ...kube]],
    ["history", ["history", "nope", "--repo", repo, ...kube]],
    ["describe", ["describe", "nope", ...host]],
    ["describe --config-only", ["describe", "nope", "--config-only", "--repo", repo]],
    ["doctor", ["doctor", "nope", ...host]],
    ["connect", ["connect", "nope", ...host]],
    ["connect --print", ["connect", "nope", "--print", ...host]],
    ["debug collect", ["debug", "collect", "nope", "--output-filename", join(tmp, "bundle.tar.gz"), ...host]],
    ["debug shell", ["debug", "shell", "nope", ...host]],
    ["restore", ["restore", "nope", "localhost:1/backups/nope:1", ...host]],
  ];

  const NAMES = [
    "validate",
    "render",
    "diff",
    "apply",
    "apply --dry-run",
    "adopt",
    "status",
    "history",
    "describe",
    "describe --config-only",
    "doctor",
    "connect",
    "connect --print",
    "debug collect",
    "debug shell",
    "restore",
  ];
  it("covers every command that takes a cluster name", () => {
    expect(commands().map(([n]) => n)).to.deep.equal(NAMES);
  });
  for (const name of NAMES) {
    it(`vc ${name}: exit 1, "error: unknown cluster "nope": ...", nothing written`, async () => {
      const args = commands().find(([n]) => n === name)![1];
      server.resetRequests();
      const r = await runVc(args, { cwd: repo });
      expect(r.code, r.stdout + r.stderr).to.equal(1);
      expect(r.stderr).to.match(/^error: unknown cluster "nope": [^\n]+\n$/);
      expect(r.stderr).not.to.contain("    at ");
      expect(r.stdout).to.equal("");
      expect(WRITES.reduce((n, method) => n + server.countRequests({ method }), 0)).to.equal(0);
      expect(existsSync(join(tmp, "bundle.tar.gz"))).to.equal(false);
    });
  }

  it("names what was looked at: the repository's folders, the target, the host namespace", async () => {
    const validate = await runVc(["validate", repo, "--cluster", "nope"]);
    expect(validate.stderr).to.equal(
      `error: unknown cluster "nope": no folder clusters/nope in ${repo}; cluster folders: bookinfo, minimal\n`,
    );
    const apply = await runVc(["apply", repo, "--cluster", "nope", ...kube]);
    expect(apply.stderr).to.match(
      new RegExp(
        `^error: unknown cluster "nope": no folder clusters/nope in ${repo} and nothing of it on kube context test ` +
          `\\(http://127\\.0\\.0\\.1:\\d+\\); cluster folders: bookinfo, minimal\\n$`,
      ),
    );
    const doctor = await runVc(["doctor", "nope", ...host]);
    expect(doctor.stderr).to.equal(
      `error: unknown cluster "nope": no folder clusters/nope in ${repo} and no host namespace vc-nope on context ` +
        `"test" (pass --namespace if it lives elsewhere); cluster folders: bookinfo, minimal\n`,
    );
  });

  it("a known name beside an unknown one: nothing is applied", async () => {
    server.resetRequests();
    const r = await runVc(["apply", repo, "--cluster", "minimal", "--cluster", "nope", ...kube]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^error: unknown cluster "nope": /);
    expect(WRITES.reduce((n, method) => n + server.countRequests({ method }), 0)).to.equal(0);
    expect(server.get("v1", "Namespace", undefined, "vc-minimal")).to.equal(undefined);
  });

  it("is not unknown when the repository has its folder, or the host its objects or namespace", async () => {
    const status = await runVc(["status", "--cluster", "minimal", ...kube], { cwd: repo });
    expect(status.code).to.equal(1);
    expect(status.stderr).to.match(
      /^error: cluster minimal has no status on kube context test .*: it has not been reconciled there\n$/,
    );
    const describe = await runVc(["describe", "minimal", ...host]);
    expect(describe.code, describe.stderr).to.equal(0);
    expect(describe.stdout).to.contain("Control plane:   absent");
    // Created elsewhere: no folder here, but its host namespace exists.
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-elsewhere" } });
    const doctor = await runVc(["doctor", "elsewhere", ...host]);
    expect(doctor.stderr).not.to.contain("unknown cluster");
    // Removed from the repository, its objects still live: diff and apply name it as removed, not unknown. (One
    // source: the same --owner in both copies of the repository, so that the second reads the first's records.)
    expect((await runVc(["apply", repo, "--cluster", "minimal", "--owner", "fleet", ...kube])).code).to.equal(0);
    const gone = exampleRepo(["bookinfo"]);
    try {
      const diff = await runVc(["diff", gone, "--cluster", "minimal", "--owner", "fleet", ...kube]);
      expect(diff.stdout + diff.stderr).not.to.contain("unknown cluster");
      expect(diff.stdout).to.contain("no cluster folder clusters/minimal; its");
    } finally {
      rmSync(gone, { recursive: true, force: true });
    }
  });
});
