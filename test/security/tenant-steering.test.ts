// Issue #38 on the in-memory API server: what a tenant writes (its folder, or what its syncer's Role lets it write in
// its host namespace) never stops, steers or reads the fleet. The real-server twin: test/e2e/tenant-steering.test.ts.
import { expect } from "chai";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
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
