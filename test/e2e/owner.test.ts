// One owner per cluster on a real API server: two sources (repositories) apply to one host; the second neither writes
// nor prunes what the first owns and says so per cluster; vc adopt hands a cluster over; two reconcilers keep apart.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "../../src/model/log.js";
import { reconcileOnce } from "../../src/reconciler/service.js";
import { useRealKube } from "../support/real-kube.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

describe("e2e: one owner per cluster on a real API server", function () {
  this.timeout(180_000);
  const kube = useRealKube();
  let a: string;
  let b: string;
  const vc = (command: string, repo: string, owner: string, ...args: string[]) =>
    runVc([command, repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, "--owner", owner, ...args]);
  const adminWrites = () => kube().writes("admin");
  const ownerLabels = async (ns: string): Promise<string[]> => {
    const r = await kube().kubectl([
      "-n",
      ns,
      "get",
      "configmaps,secrets,services,statefulsets,serviceaccounts,roles,rolebindings",
      "-l",
      "vc.orch.io/inventory",
      "-o",
      'jsonpath={range .items[*]}{.metadata.labels.vc\\.orch\\.io/owner}{"\\n"}{end}',
    ]);
    return [...new Set(r.stdout.trim().split("\n"))].sort();
  };

  before(() => {
    a = exampleRepo(["minimal"]);
    b = exampleRepo(["platform"], {
      "clusters/minimal/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: 2\n",
    });
  });
  after(() => {
    for (const r of [a, b]) if (r) rmSync(r, { recursive: true, force: true });
  });

  it(
    "the second source writes nothing of the first's cluster, prunes nothing of it, and reports the conflict; its " +
      "own cluster applies",
    async () => {
      const first = await vc("apply", a, "team-a");
      expect(first.code, first.stdout + first.stderr).to.equal(0);
      expect(await ownerLabels("vc-minimal")).to.deep.equal(["team-a"]);
      const before = adminWrites().length;
      const second = await vc("apply", b, "team-b", "--prune", "--allow-mass-prune");
      expect(second.code).to.equal(1);
      expect(second.stdout)
        .to.include("! cluster minimal is held by source team-a (its record since")
        .and.include("this source (team-b) is refused");
      expect(second.stdout).to.match(/cluster platform: \d+ created/);
      const writes = adminWrites().slice(before);
      expect(
        writes.filter((w) => w.namespace === "vc-platform").length,
        "the audit sees the writes of platform",
      ).to.be.greaterThan(5);
      expect(
        writes.filter((w) => w.namespace === "vc-minimal" || w.name === "vc-minimal"),
        JSON.stringify(writes),
      ).to.deep.equal([]);
      expect(writes.filter((w) => w.verb === "delete")).to.deep.equal([]);
      const replicas = await kube().kubectl([
        "-n",
        "vc-minimal",
        "get",
        "statefulset",
        "minimal",
        "-o",
        "jsonpath={.spec.replicas}",
      ]);
      expect(replicas.stdout).to.equal("1");
      // The first source, pruning with the guard off, leaves the second's platform alone.
      const mark = adminWrites().length;
      const again = await vc("apply", a, "team-a", "--prune", "--allow-mass-prune");
      expect(again.code, again.stdout).to.equal(0);
      expect(
        adminWrites()
          .slice(mark)
          .filter((w) => w.verb === "delete"),
      ).to.deep.equal([]);
    },
  );

  it("vc adopt hands minimal to the second source; the first then leaves it alone, folder removed or not", async () => {
    const adopted = await runVc([
      "adopt",
      "minimal",
      b,
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigPath,
      "--owner",
      "team-b",
      "--from",
      "team-a",
    ]);
    expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
    expect(await ownerLabels("vc-minimal")).to.deep.equal(["team-b"]);
    const replicas = await kube().kubectl([
      "-n",
      "vc-minimal",
      "get",
      "statefulset",
      "minimal",
      "-o",
      "jsonpath={.spec.replicas}",
    ]);
    expect(replicas.stdout).to.equal("2");
    const back = await vc("diff", a, "team-a");
    expect(back.stdout).to.include("cluster minimal is held by source team-b");
    rmSync(join(a, "clusters", "minimal"), { recursive: true });
    const mark = adminWrites().length;
    const pruned = await vc("apply", a, "team-a", "--prune", "--allow-mass-prune");
    expect(pruned.code, pruned.stdout).to.equal(0);
    expect(
      adminWrites()
        .slice(mark)
        .filter((w) => w.verb === "delete"),
    ).to.deep.equal([]);
  });

  it("a reconciler of the other source leaves the cluster and its status alone and reports it blocked", async () => {
    const repo = exampleRepo(["minimal"]);
    try {
      // The statuses team-b's vc apply and vc adopt recorded: the reconciler of team-c rewrites neither.
      const statusOf = async (ns: string) =>
        (
          await kube().kubectl([
            "-n",
            "vc-system",
            "get",
            "configmap",
            "-l",
            `vc.orch.io/record=record,vc.orch.io/host-namespace=${ns}`,
            "-o",
            "jsonpath={.items[*].metadata.resourceVersion} {.items[*].metadata.labels.vc\\.orch\\.io/owner}",
          ])
        ).stdout;
      const before = [await statusOf("vc-minimal"), await statusOf("vc-platform")];
      expect(before.map((s) => s.split(" ")[1])).to.deep.equal(["team-b", "team-b"]);
      const res = await reconcileOnce({
        repo,
        branch: "main",
        target: "kube",
        kubeconfig: kube().kubeconfigPath,
        intervalMs: 60_000,
        resyncMs: 60_000,
        leaderElect: false,
        allowMassPrune: true,
        owner: "team-c",
        logger: silentLogger,
        cacheDir: join(repo, ".cache"),
      });
      const by = new Map(res.clusters.map((c) => [c.cluster, c]));
      expect(by.get("minimal")!.result).to.equal("blocked");
      expect(by.get("minimal")!.message).to.include("cluster minimal is held by source team-b");
      expect(
        by.has("platform"),
        "another source's cluster: no record of team-c's, so not removed, not pruned",
      ).to.equal(false);
      expect(
        [await statusOf("vc-minimal"), await statusOf("vc-platform")],
        "no status written for a cluster it does not own",
      ).to.deep.equal(before);
      expect(await ownerLabels("vc-platform")).to.deep.equal(["team-b"]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
