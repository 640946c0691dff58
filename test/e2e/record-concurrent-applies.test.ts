// Two `vc apply` at once on commits X and Y, on a real API server: the third fault row. Each run is its own
// process under its own token user, so the audit log says which run wrote which cluster's objects; every run that
// wrote a cluster has its entry in that cluster's history (none lost, none twice), every record names the revision the
// cluster's objects are at, and a run that meets the other's apply lease waits for it or exits 2 naming it.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { duplicates, holdingWebhook, hostOf, recordsOf, smallFleet, vcProcess } from "../support/record-faults.js";
import { runVc } from "../support/vc.js";

const RUNNERS = ["runner-x", "runner-y"];

describe("e2e: two vc apply at once on two commits", function () {
  this.timeout(300_000);
  const kube = useRealKube({ users: RUNNERS.map((name) => ({ name, groups: ["system:masters"] })) });
  let fleet: ReturnType<typeof smallFleet>;
  let older: string;
  let cpu = 200;

  before(async () => {
    fleet = smallFleet(3, cpu);
    older = join(fleet.repo.work, "..", "older");
    const applied = await runVc(["apply", fleet.repo.work, ...common(kube().kubeconfigPath)]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(() => fleet?.repo.dispose());

  function common(kubeconfig: string): string[] {
    return ["--target", "kube", "--kubeconfig", kubeconfig, "--owner", "team-a"];
  }
  /** Commits X, then Y; the work tree stays at Y, a second work tree is checked out at X. */
  const twoCommits = (): { x: string; y: string } => {
    const x = fleet.commit((cpu += 10));
    const y = fleet.commit((cpu += 10));
    execFileSync("git", ["worktree", "add", "-f", "--detach", older, x], { cwd: fleet.repo.work, stdio: "pipe" });
    return { x, y };
  };
  const dropOlder = () =>
    execFileSync("git", ["worktree", "remove", "--force", older], { cwd: fleet.repo.work, stdio: "pipe" });
  const start = (runner: string, work: string, ...extra: string[]) =>
    vcProcess(["apply", work, ...common(kube().kubeconfigFor(runner)), ...extra]);

  /** Records = host for every cluster, and every run that wrote a cluster's StatefulSet has its one entry there. */
  const expectNothingLost = async (
    runs: Array<{ runner: string; revision: string; code?: number | null }>,
    since: number,
  ) => {
    const records = await recordsOf(kube());
    const writes = kube().writes().slice(since);
    for (const cluster of fleet.clusters) {
      const host = await hostOf(kube(), cluster);
      const record = records.get(cluster);
      expect(record?.lastAppliedRevision, `${cluster}: the record says what its objects are at`).to.equal(
        host.revision,
      );
      expect(record?.applying, `${cluster}: no apply lease left`).to.equal(undefined);
      expect(duplicates(record!.entries), `${cluster}: entries stored twice`).to.deep.equal([]);
      for (const { runner, revision, code } of runs) {
        // A run that exited 0 applied and recorded every cluster (each commit changes every cluster's StatefulSet).
        const wrote =
          code === 0 ||
          writes.some(
            (w) =>
              w.user === runner &&
              w.resource === "statefulsets" &&
              w.namespace === `vc-${cluster}` &&
              w.code >= 200 &&
              w.code < 300,
          );
        if (!wrote) continue;
        expect(
          record!.entries.filter((e) => e.revision === revision && e.result === "applied"),
          `${cluster}: the entry of ${runner}'s run (${revision}), which wrote its StatefulSet or exited 0`,
        ).to.have.length(1);
      }
    }
  };

  it("the second run meets the first's apply lease: it exits 2 naming that run; nothing is lost", async () => {
    const { x, y } = twoCommits();
    const since = kube().writes().length;
    // X's run is held at c2's StatefulSet, holding c2's apply lease.
    const webhook = await holdingWebhook(kube(), {
      name: "hold-x-c2",
      rule: { operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] },
      objectSelector: { "vc.orch.io/inventory": "c2" },
      hold: (r) => r.userInfo?.username === "runner-x",
    });
    const runX = start("runner-x", older);
    try {
      let xCode: number | null | undefined;
      void runX.exited().then((c) => (xCode = c));
      await waitFor(() => xCode !== undefined || webhook.held() > 0, "X's run held at c2", 120_000);
      expect(xCode, runX.output()).to.equal(undefined);
      // Y in this process (no start-up to wait for: X's write is held for at most the webhook's 30 s).
      const runY = await runVc([
        "apply",
        fleet.repo.work,
        ...common(kube().kubeconfigFor("runner-y")),
        "--lock-timeout",
        "2s",
      ]);
      const yOutput = runY.stdout + runY.stderr;
      expect(runY.code, yOutput).to.equal(2);
      expect(yOutput).to.include("cluster c2 is being applied by another run");
      expect(yOutput, "the message names the run").to.include(`vc apply of ${x.slice(0, 12)}`);
      webhook.release();
      webhook.stopHolding();
      expect(await runX.exited(), runX.output()).to.equal(0);
    } finally {
      await webhook.close();
      if (runX.child.exitCode === null && runX.child.signalCode === null) runX.child.kill("SIGKILL");
      await runX.exited();
      dropOlder();
    }
    expect((await hostOf(kube(), "c2")).revision, "Y's run wrote nothing of c2").to.equal(x);
    await expectNothingLost(
      [
        { runner: "runner-x", revision: x },
        { runner: "runner-y", revision: y },
      ],
      since,
    );
  });

  it("the first run's status write in flight while the second reaches the cluster: both entries kept", async () => {
    const { x, y } = twoCommits();
    const since = kube().writes().length;
    // X's run has written c1's objects; its status write of c1 is held, so what it read of the status is old.
    const webhook = await holdingWebhook(kube(), {
      name: "hold-x-c1-status",
      rule: { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
      objectSelector: { "vc.orch.io/record": "record", "vc.orch.io/managed-by": "c1" },
      hold: (r) =>
        r.userInfo?.username === "runner-x" &&
        r.object?.data?.lastAttemptedRevision === x &&
        r.oldObject?.data?.lastAttemptedRevision !== x,
    });
    const runX = start("runner-x", older);
    let codes: Array<number | null> = [];
    try {
      let xCode: number | null | undefined;
      void runX.exited().then((c) => (xCode = c));
      await waitFor(() => xCode !== undefined || webhook.held() > 0, "X's status write of c1 held", 120_000);
      expect(xCode, runX.output()).to.equal(undefined);
      // Y reaches c1: it waits for X's apply lease (or, without one, writes c1 and records it); then X's write goes on.
      const runY = start("runner-y", fleet.repo.work);
      let yCode: number | null | undefined;
      void runY.exited().then((c) => (yCode = c));
      await waitFor(
        async () =>
          yCode !== undefined ||
          runY.output().includes("cluster c1: waiting for another run") ||
          !!(await recordsOf(kube())).get("c1")?.entries.some((e) => e.revision === y),
        "Y's run to wait for c1 or record it",
        120_000,
      );
      webhook.release();
      webhook.stopHolding();
      codes = [await runX.exited(), await runY.exited()];
      expect(codes[0], runX.output()).to.equal(0);
      expect(codes[1], runY.output()).to.equal(0);
    } finally {
      await webhook.close();
      if (runX.child.exitCode === null && runX.child.signalCode === null) runX.child.kill("SIGKILL");
      await runX.exited();
      dropOlder();
    }
    await expectNothingLost(
      [
        { runner: "runner-x", revision: x, code: codes[0] },
        { runner: "runner-y", revision: y, code: codes[1] },
      ],
      since,
    );
  });

  it("the reconciler's status write in flight while a vc apply reaches the cluster: both entries kept", async () => {
    const { x, y } = twoCommits();
    const since = kube().writes().length;
    const webhook = await holdingWebhook(kube(), {
      name: "hold-reconciler-c1-status",
      rule: { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
      objectSelector: { "vc.orch.io/record": "record", "vc.orch.io/managed-by": "c1" },
      hold: (r) =>
        r.userInfo?.username === "runner-x" &&
        r.object?.data?.lastAttemptedRevision === x &&
        r.oldObject?.data?.lastAttemptedRevision !== x,
    });
    // The reconciler's one pass of X (the work tree checked out at X), under runner-x.
    const pass = vcProcess(["reconcile", "--once", "--repo", older, ...common(kube().kubeconfigFor("runner-x"))]);
    let codes: Array<number | null> = [];
    try {
      let passCode: number | null | undefined;
      void pass.exited().then((c) => (passCode = c));
      await waitFor(() => passCode !== undefined || webhook.held() > 0, "the pass's status write of c1", 120_000);
      expect(passCode, pass.output()).to.equal(undefined);
      const runY = start("runner-y", fleet.repo.work);
      let yCode: number | null | undefined;
      void runY.exited().then((c) => (yCode = c));
      await waitFor(
        async () =>
          yCode !== undefined ||
          runY.output().includes("cluster c1: waiting for another run") ||
          !!(await recordsOf(kube())).get("c1")?.entries.some((e) => e.revision === y),
        "Y's run to wait for c1 or record it",
        120_000,
      );
      webhook.release();
      webhook.stopHolding();
      codes = [await pass.exited(), await runY.exited()];
      expect(codes[0], pass.output()).to.equal(0);
      expect(codes[1], runY.output()).to.equal(0);
    } finally {
      await webhook.close();
      if (pass.child.exitCode === null && pass.child.signalCode === null) pass.child.kill("SIGKILL");
      await pass.exited();
      dropOlder();
    }
    await expectNothingLost(
      [
        { runner: "runner-x", revision: x, code: codes[0] },
        { runner: "runner-y", revision: y, code: codes[1] },
      ],
      since,
    );
  });

  it("both started at once: each waits for the other's lease or exits 2, never an entry lost", async () => {
    const { x, y } = twoCommits();
    const since = kube().writes().length;
    let codes: Array<number | null> = [];
    try {
      const runX = start("runner-x", older);
      const runY = start("runner-y", fleet.repo.work);
      codes = await Promise.all([runX.exited(), runY.exited()]);
      expect([0, 2], `X exited ${codes[0]}:\n${runX.output()}`).to.include(codes[0]);
      expect([0, 2], `Y exited ${codes[1]}:\n${runY.output()}`).to.include(codes[1]);
      expect(codes, "at least one run applies").to.include(0);
    } finally {
      dropOlder();
    }
    await expectNothingLost(
      [
        { runner: "runner-x", revision: x, code: codes[0] },
        { runner: "runner-y", revision: y, code: codes[1] },
      ],
      since,
    );
  });
});
