// A stale leader on a real API server: the fourth fault row. Two reconciler replicas (child processes, token
// users replica-a and replica-b) follow a git remote; the leader is frozen (SIGSTOP) mid-pass with its write of a
// cluster's StatefulSet in flight (a webhook holds it) and clusters of its pass still to go. The standby takes the
// Lease and applies the next commit (HEAD); then the held write reaches the server and the old leader resumes
// (SIGCONT). It writes nothing: the write in flight is refused or cut off, its record writes are refused (409), its
// other clusters are skipped; every record says HEAD, which every cluster's objects are at.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGitServer, type GitServer } from "../support/git-server.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { duplicates, holdingWebhook, hostOf, recordsOf, smallFleet, vcProcess } from "../support/record-faults.js";

describe("e2e: a stale leader resumed after the standby applied HEAD", function () {
  this.timeout(300_000);
  const kube = useRealKube({
    users: ["replica-a", "replica-b"].map((name) => ({ name, groups: ["system:masters"] })),
  });
  let fleet: ReturnType<typeof smallFleet>;
  let git: GitServer;
  let cache: string;
  const replicas: Array<ReturnType<typeof vcProcess>> = [];

  const startReplica = (identity: string) => {
    const replica = vcProcess([
      "reconcile",
      "--repo",
      `${git.url}/${fleet.repo.path}`,
      "--interval",
      "1s",
      "--resync",
      "1h",
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigFor(`replica-${identity}`),
      "--leader-elect",
      "--lease-namespace",
      "vc-system",
      "--identity",
      identity,
      // One cluster at a time: when the leader is frozen at c2, c3 and c4 are still to go in its pass.
      "--concurrency",
      "1",
      "--cache-dir",
      join(cache, identity),
    ]);
    replicas.push(replica);
    return replica;
  };
  const holder = async () =>
    (
      await kube().request<{ spec?: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/vc-system/leases/vc-reconciler",
      )
    ).body.spec?.holderIdentity;
  /** Every cluster's record and objects at `revision`. */
  const allAt = async (revision: string) => {
    const records = await recordsOf(kube());
    for (const cluster of fleet.clusters) {
      if (records.get(cluster)?.lastAppliedRevision !== revision) return false;
      if ((await hostOf(kube(), cluster)).revision !== revision) return false;
    }
    return true;
  };

  before(async () => {
    fleet = smallFleet(4, 200);
    git = await startGitServer(fleet.repo.root);
    cache = mkdtempSync(join(tmpdir(), "vc-e2e-stale-leader-"));
    expect((await kube().kubectl(["create", "namespace", "vc-system"])).code).to.equal(0);
    expect(
      (await kube().kubectl(["label", "namespace", "vc-system", "vc.orch.io/platform-namespace=true"])).code,
    ).to.equal(0);
  });
  after(async () => {
    for (const r of replicas) {
      if (r.child.exitCode !== null || r.child.signalCode !== null) continue;
      r.child.kill("SIGCONT");
      r.child.kill("SIGKILL");
      await r.exited();
    }
    await git?.close();
    fleet?.repo.dispose();
    if (cache) rmSync(cache, { recursive: true, force: true });
  });

  it("the resumed old leader writes nothing; every record says HEAD, as the host does", async () => {
    const a = startReplica("a");
    await waitFor(async () => (await holder()) === "a", `replica a to lead:\n${a.output()}`, 120_000);
    const first = fleet.repo.head();
    await waitFor(() => allAt(first), `the fleet applied by a:\n${a.output()}`, 120_000);
    const b = startReplica("b");
    await waitFor(() => b.output().includes("reconciler started"), `replica b to start:\n${b.output()}`, 120_000);

    // a's pass of the next commit is held at c2's StatefulSet (c1 done, c3 and c4 to go), and a is frozen there.
    const webhook = await holdingWebhook(kube(), {
      name: "hold-a-c2",
      rule: { operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] },
      objectSelector: { "vc.orch.io/inventory": "c2" },
      hold: (r) => r.userInfo?.username === "replica-a",
    });
    let head: string;
    let since: number;
    try {
      const previous = fleet.commit(210);
      await waitFor(() => webhook.held() > 0, `a's pass of ${previous} held at c2:\n${a.output()}`, 120_000);
      a.child.kill("SIGSTOP");
      expect((await hostOf(kube(), "c1")).revision, "c1 applied before c2").to.equal(previous);
      head = fleet.commit(220);
      await waitFor(async () => (await holder()) === "b", `b to take the Lease:\n${b.output()}`, 120_000);
      await waitFor(() => allAt(head), `b to apply HEAD ${head}:\n${b.output()}`, 120_000);
      // a's write of c2 (planned on the commit before), in flight all along, now reaches the server; then a goes on.
      // (Should b take longer than the webhook's 30 s, the server gives the write up and a's retry is the stale write.)
      since = kube().writes().length;
      webhook.release();
      webhook.stopHolding();
      const logged = a.output().length;
      a.child.kill("SIGCONT");
      // a ends its cluster c2 (a line `reconciled` for it) and learns it no longer leads.
      await waitFor(
        () => {
          const after = a.output().slice(logged);
          return after.includes('"stopped leading"') && /"msg":"reconciled".*"cluster":"c2"/.test(after);
        },
        `a to resume, end its cluster and stop leading:\n${a.output().slice(logged)}`,
        60_000,
      );
      // Whatever else a's pass had to go (c3, c4, c2's status) would follow at once: give it b's renew period to show.
      await new Promise((r) => setTimeout(r, 5000));
    } finally {
      await webhook.close();
    }

    const staleWrites = kube()
      .writes()
      .slice(since)
      .filter((w) => w.user === "replica-a" && w.resource !== "leases" && w.code >= 200 && w.code < 300);
    expect(staleWrites, `writes the resumed old leader made:\n${a.output()}`).to.deep.equal([]);
    const records = await recordsOf(kube());
    for (const cluster of fleet.clusters) {
      expect(await hostOf(kube(), cluster), `${cluster}'s objects`).to.deep.equal({ revision: head, cpu: "220m" });
      const record = records.get(cluster);
      expect(record?.lastAppliedRevision, `${cluster}'s record`).to.equal(head);
      expect(record?.result, cluster).to.equal("applied");
      expect(record?.applying, `${cluster}'s apply lease`).to.equal(undefined);
      expect(duplicates(record!.entries), `${cluster}: entries stored twice`).to.deep.equal([]);
      expect(record!.entries.at(-1)?.revision, `${cluster}: the newest entry`).to.equal(head);
    }
    expect(await holder()).to.equal("b");
  });
});
