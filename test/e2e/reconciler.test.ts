// Two reconciler replicas against a real API server: one Lease leader applies, the standby writes nothing, the standby
// takes over when the leader stops; the status ConfigMaps it writes are what `vc status` and `vc history` read.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube, waitFor } from "../support/real-kube.js";

const ROOT = join(import.meta.dirname, "..", "..");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=e2e", "-c", "user.email=e2e@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

interface Replica {
  child: ChildProcess;
  log: () => string;
}

describe("e2e: the reconciler with two replicas on a real API server", function () {
  this.timeout(180_000);
  const kube = useRealKube({
    users: [
      { name: "replica-a", groups: ["system:masters"] },
      { name: "replica-b", groups: ["system:masters"] },
    ],
  });
  let repo: string;
  const replicas: Replica[] = [];

  function startReplica(identity: string): Replica {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "src/cli/main.ts"),
        "reconcile",
        "--repo",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigFor(`replica-${identity}`),
        "--leader-elect",
        "--lease-namespace",
        "vc-system",
        "--identity",
        identity,
        "--resync",
        "1h",
        "--cache-dir",
        join(repo, "..", `cache-${identity}`),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
    );
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    const replica = { child, log: () => out };
    replicas.push(replica);
    return replica;
  }
  async function stop(r: Replica): Promise<void> {
    if (r.child.exitCode !== null || r.child.signalCode !== null) return;
    const gone = new Promise((resolve) => r.child.once("exit", resolve));
    r.child.kill("SIGTERM");
    await gone;
  }
  const holder = async () =>
    (
      await kube().request<{ spec?: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/vc-system/leases/vc-reconciler",
      )
    ).body.spec?.holderIdentity;
  const replicasOf = async (ns: string, name: string) =>
    (await kube().kubectl(["-n", ns, "get", "statefulset", name, "-o", "jsonpath={.spec.replicas}"])).stdout;

  before(async () => {
    const parent = mkdtempSync(join(tmpdir(), "vc-e2e-reconciler-"));
    repo = join(parent, "fleet");
    cpSync(join(ROOT, "clusters"), join(repo, "clusters"), { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "fleet");
    await installExampleCrds(kube());
    expect((await kube().kubectl(["create", "namespace", "vc-system"])).code).to.equal(0);
    expect(
      (await kube().kubectl(["label", "namespace", "vc-system", "vc.orch.io/platform-namespace=true"])).code,
    ).to.equal(0);
  });
  after(async () => {
    for (const r of replicas) await stop(r);
    if (repo) rmSync(join(repo, ".."), { recursive: true, force: true });
  });

  it("one leader applies every cluster and the standby makes no writes but to the Lease", async () => {
    const a = startReplica("a");
    await waitFor(async () => (await holder()) === "a", "replica a to lead", 60_000);
    await waitFor(
      async () => (await replicasOf("vc-platform", "platform")) === "1",
      `the fleet to be applied:\n${a.log()}`,
      90_000,
    );
    await waitFor(
      async () =>
        (
          await kube().kubectl([
            "-n",
            "vc-system",
            "get",
            "configmap",
            "-l",
            "vc.orch.io/record=record,vc.orch.io/managed-by=minimal",
            "-o",
            "jsonpath={.items[*].data.result}",
          ])
        ).stdout === "applied",
      "minimal's record",
      30_000,
    );
    startReplica("b");
    await new Promise((r) => setTimeout(r, 6000));
    expect(await holder()).to.equal("a");
    const standbyWrites = kube()
      .writes("replica-b")
      .filter((w) => w.resource !== "leases");
    expect(standbyWrites, JSON.stringify(standbyWrites)).to.deep.equal([]);
  });

  it("vc status and vc history read what the leader recorded", async () => {
    const head = git(repo, "rev-parse", "HEAD");
    const status = await runVc(["status", "--target", "kube", "--kubeconfig", kube().kubeconfigPath, "-o", "json"]);
    expect(status.code, status.stdout + status.stderr).to.equal(0);
    const rows = JSON.parse(status.stdout) as Array<{ cluster: string; lastAppliedRevision?: string; result?: string }>;
    const minimal = rows.find((r) => r.cluster === "minimal")!;
    expect(minimal.lastAppliedRevision).to.equal(head);
    const history = await runVc([
      "history",
      "minimal",
      "--repo",
      repo,
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigPath,
    ]);
    expect(history.code, history.stdout + history.stderr).to.equal(0);
    expect(history.stdout).to.include(head.slice(0, 7));
  });

  it("when the leader stops, the standby takes over and applies the next commit", async () => {
    await stop(replicas[0]!);
    await waitFor(async () => (await holder()) === "b", "replica b to take over", 60_000);
    const values = join(repo, "clusters", "minimal", "values.yaml");
    writeFileSync(
      values,
      `${readFileSync(values, "utf8")}\n`.replace(
        /^controlPlane:\n {2}statefulSet:\n/m,
        "controlPlane:\n  statefulSet:\n    replicas: 2\n",
      ),
    );
    expect(readFileSync(values, "utf8")).to.include("replicas: 2");
    git(repo, "commit", "-q", "-am", "minimal: two replicas");
    await waitFor(
      async () => (await replicasOf("vc-minimal", "minimal")) === "2",
      `replica b to apply the commit:\n${replicas[1]!.log()}`,
      60_000,
    );
    expect(
      kube()
        .writes("replica-b")
        .filter((w) => w.resource === "statefulsets").length,
    ).to.be.greaterThan(0);
  });
});
