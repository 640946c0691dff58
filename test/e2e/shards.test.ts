// Three sharded reconciler replicas on a real API server (issue #26, "past one replica", at a size CI affords): a
// generated fleet of 60 clusters over shards 0/3, 1/3 and 2/3, the leader of one shard killed (SIGKILL) in the middle
// of its pass, its standby takes the shard's Lease over and finishes; every cluster applied and recorded once, by its
// own shard, no object created twice, no 409 (bench/shards.ts runs the same proof with 3,000 clusters).
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { shardOf } from "../../src/reconciler/shard.js";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube, waitFor } from "../support/real-kube.js";
import {
  appliedClusters,
  checkShards,
  leaseHolder,
  listRecords,
  startReplica,
  type Replica,
} from "../support/shards.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLUSTERS = 60;
const SHARDS = 3;
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=e2e", "-c", "user.email=e2e@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

describe("e2e: sharded reconcilers on a real API server, one killed mid-pass", function () {
  this.timeout(600_000);
  const users = ["shard-0", "shard-1", "shard-2", "standby"];
  // Two ClusterIPs per cluster: more than the default /24 holds.
  const kube = useRealKube({
    users: users.map((name) => ({ name, groups: ["system:masters"] })),
    extraArgs: ["--service-cluster-ip-range=10.0.0.0/20"],
  });
  let parent: string;
  let repo: string;
  let head: string;
  const replicas: Replica[] = [];
  const names = Array.from({ length: CLUSTERS }, (_, i) => fleetClusterName(i));
  const shardNames = (s: number) => names.filter((n) => shardOf(n, SHARDS) === s);
  // The victim is the largest shard, reconciling one cluster at a time: its pass is long enough to be cut in the
  // middle.
  const victim = [0, 1, 2].sort((a, b) => shardNames(b).length - shardNames(a).length)[0]!;

  const start = (user: string, shard: number, concurrency = 4) => {
    const r = startReplica({
      cli: ["--import", "tsx", join(ROOT, "src/cli/main.ts")],
      cwd: ROOT,
      repo,
      kubeconfig: kube().kubeconfigFor(user),
      identity: user,
      shard: `${shard}/${SHARDS}`,
      cacheDir: join(parent, `cache-${user}`),
      concurrency,
    });
    replicas.push(r);
    return r;
  };

  before(async () => {
    parent = mkdtempSync(join(tmpdir(), "vc-e2e-shards-"));
    repo = join(parent, "fleet");
    await generateFleet(repo, { clusters: CLUSTERS, meshPerCluster: 5 });
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "fleet");
    head = git(repo, "rev-parse", "HEAD");
    await installExampleCrds(kube());
    expect((await kube().kubectl(["create", "namespace", "vc-system"])).code).to.equal(0);
    expect(
      (await kube().kubectl(["label", "namespace", "vc-system", "vc.orch.io/platform-namespace=true"])).code,
    ).to.equal(0);
  });
  after(async () => {
    for (const r of replicas) await r.stop();
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  it("the killed shard is taken over and finished: every cluster applied once, by its own shard", async () => {
    expect(shardNames(0).length + shardNames(1).length + shardNames(2).length).to.equal(CLUSTERS);
    expect(Math.min(...[0, 1, 2].map((s) => shardNames(s).length))).to.be.greaterThan(0);
    const leaders = [0, 1, 2].map((s) => start(`shard-${s}`, s, s === victim ? 1 : 4));
    const dying = leaders[victim]!;
    await waitFor(
      async () => (await leaseHolder(kube(), victim, SHARDS)) === dying.identity,
      `shard ${victim}'s leader to take its Lease:\n${dying.log()}`,
      120_000,
    );
    const standby = start("standby", victim);

    // Kill the victim once it has reconciled a few of its clusters, while others remain.
    await waitFor(
      () => dying.reconciled() >= 3 || !dying.alive(),
      `shard ${victim}'s leader to reconcile three clusters:\n${dying.log()}`,
      300_000,
    );
    const killedAt = new Date();
    await dying.kill();
    const doneAtKill = await appliedClusters(kube(), head);
    const victimDone = shardNames(victim).filter((c) => doneAtKill.has(c));
    expect(victimDone.length, "the kill must land in the middle of the pass")
      .to.be.greaterThan(0)
      .and.lessThan(shardNames(victim).length);

    await waitFor(
      async () => (await leaseHolder(kube(), victim, SHARDS)) === "standby",
      `the standby to take shard ${victim}'s Lease over:\n${standby.log()}`,
      120_000,
    );
    await waitFor(
      async () => (await appliedClusters(kube(), head)).size === CLUSTERS,
      "every cluster to be applied",
      300_000,
    );
    for (const r of replicas.filter((r) => r.alive())) expect(r.alive(), r.log()).to.equal(true);

    const found = await checkShards(kube(), {
      clusters: names,
      shardCount: SHARDS,
      revision: head,
      shardOfUser: new Map([
        ["shard-0", 0],
        ["shard-1", 1],
        ["shard-2", 2],
        ["standby", victim],
      ]),
      killed: { user: dying.identity, at: killedAt },
    });
    expect(found.notApplied).to.deep.equal([]);
    expect(found.twoRecords).to.deep.equal([]);
    expect(found.owners).to.have.length(1);
    expect(found.objects).to.be.greaterThan(CLUSTERS * 10);
    expect(found.missing).to.deep.equal([]);
    expect(
      found.createdTwice,
      `the audit trail of the objects created ` +
        `twice:\n${found.createdTwiceTrail.join("\n")}\n${replicas.map((r) => `${r.identity}:\n${r.log()}`).join("\n")}`,
    ).to.deep.equal([]);
    expect(
      found.neverCreated,
      `the audit trail of the objects never ` +
        `created:\n${found.neverCreatedTrail.join("\n")}\n${replicas.map((r) => `${r.identity}:\n${r.log()}`).join("\n")}`,
    ).to.deep.equal([]);
    expect(found.conflicts, found.conflictTrail.join("\n")).to.equal(0);
    expect(found.crossShard).to.deep.equal([]);
    // The takeover wrote: the standby finished what the killed leader left.
    expect(found.writesBy.standby ?? 0).to.be.greaterThan(0);
    expect(found.writesBy[`shard-${victim}`] ?? 0).to.be.greaterThan(0);

    // Nothing left to apply: the whole fleet matches the host.
    const records = await listRecords(kube());
    expect(records).to.have.length(CLUSTERS);
    const diff = await runVc(["diff", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, "--exit-code"]);
    expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
  });
});
