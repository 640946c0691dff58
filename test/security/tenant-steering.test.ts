// Issue #38 on the in-memory API server: what a tenant writes (its folder, or what its syncer's Role lets it write in
// its host namespace) never stops, steers or reads the fleet. The real-server twin: test/e2e/tenant-steering.test.ts.
import { expect } from "chai";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

describe("tenant steering (in-memory API server)", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let repo: string;
  let kube: string[];
  const vc = (command: string, ...args: string[]) => runVc([command, ...args, ...kube, "--owner", "team-a"]);

  beforeEach(async () => {
    server = await startKubeServer();
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    repo = exampleRepo(["minimal"]);
    const first = await vc("apply", repo);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it("#38.12: vc adopt --take-ownership of an object the cluster does not render is an error and writes nothing", async () => {
    mkdirSync(join(repo, "clusters", "fresh"), { recursive: true });
    writeFileSync(join(repo, "clusters", "fresh", "values.yaml"), "{}\n");
    server.resetRequests();
    const res = await vc("adopt", "fresh", repo, "--take-ownership", "ConfigMap/vc-fresh/not-rendered");
    expect(res.code, res.stdout + res.stderr).to.equal(2);
    expect(res.stderr).to.include("ConfigMap/vc-fresh/not-rendered").and.include("does not render");
    expect(server.requests.filter((r) => WRITES.has(r.method))).to.deep.equal([]);
  });
});

describe("tenant steering without a host (dir: target)", function () {
  this.timeout(60_000);

  /** Every Gateway manifest under a dir: target, as `cluster/file`. */
  const gateways = (dir: string): string[] =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true, encoding: "utf8" })
          .filter((f) => /gateway\.networking\.mesh\.io_/.test(f))
          .sort()
      : [];

  it("#38.9: vc apply --target dir: refuses two clusters claiming one public host as --target kube does", async () => {
    const repo = exampleRepo(["bookinfo"]);
    const out = mkdtempSync(join(tmpdir(), "vc-dir-claims-"));
    try {
      cpSync(join(repo, "clusters", "bookinfo"), join(repo, "clusters", "bookinfo-copy"), { recursive: true });
      writeFileSync(join(repo, "clusters", "bookinfo-copy", "cluster.yaml"), "namespace: team-bookinfo-copy\n");
      const validated = await runVc(["validate", repo]);
      expect(validated.code, validated.stdout).to.equal(1);
      expect(validated.stdout + validated.stderr).to.include("bookinfo.example.com");

      const res = await runVc(["apply", repo, "--target", `dir:${out}`]);
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stdout).to.include('public host "bookinfo.example.com" belongs to cluster');
      expect(gateways(out), "no Gateway written for either").to.deep.equal([]);

      // Once one folder gives the host up, the other is applied; a later claim of it loses to the written one.
      rmSync(join(repo, "clusters", "bookinfo-copy"), { recursive: true });
      expect((await runVc(["apply", repo, "--target", `dir:${out}`])).code).to.equal(0);
      expect(gateways(out)).to.have.length(1);
      mkdirSync(join(repo, "clusters", "late", "mesh"), { recursive: true });
      cpSync(join(repo, "clusters", "bookinfo", "values.yaml"), join(repo, "clusters", "late", "values.yaml"));
      cpSync(
        join(repo, "clusters", "bookinfo", "mesh", "gateway.yaml"),
        join(repo, "clusters", "late", "mesh", "gateway.yaml"),
      );
      const late = await runVc(["apply", repo, "--target", `dir:${out}`, "--cluster", "late"]);
      expect(late.code, late.stdout + late.stderr).to.equal(1);
      expect(late.stdout).to.include('public host "bookinfo.example.com" belongs to cluster bookinfo');
      expect(gateways(out)).to.have.length(1);
    } finally {
      rmSync(repo, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });
});
