// `kill -9` of `vc apply` mid-write, then a rerun, on a real API server: the first fault row. An admission
// webhook holds a write so the kill lands provably where the test says (a cluster's objects half written; every
// object written and every status write in flight). After the rerun every record says the revision the host has, and
// every reconciliation is kept exactly once.
import { expect } from "chai";
import type { TestRepo } from "../support/git-server.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import {
  duplicates,
  expectRecordsAtHost,
  holdingWebhook,
  hostOf,
  recordsOf,
  smallFleet,
  vcProcess,
} from "../support/record-faults.js";
import { runVc } from "../support/vc.js";

describe("e2e: vc apply killed mid-write, then run again", function () {
  this.timeout(300_000);
  const kube = useRealKube();
  let fleet: ReturnType<typeof smallFleet>;
  let repo: TestRepo;
  let first: string;

  const args = () => [repo.work, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, "--owner", "team-a"];

  before(async () => {
    fleet = smallFleet(3, 200);
    repo = fleet.repo;
    first = repo.head();
    const applied = await runVc(["apply", ...args()]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(() => repo?.dispose());

  /** Starts `vc apply` of the work tree as its own process and kills it (-9) once `ready` holds. */
  const killWhen = async (ready: () => Promise<boolean>, what: string) => {
    const run = vcProcess(["apply", ...args()]);
    let code: number | null | undefined;
    void run.exited().then((c) => (code = c));
    await waitFor(async () => code !== undefined || (await ready()), what, 120_000);
    expect(code, `the run is held, not ended:\n${run.output()}`).to.equal(undefined);
    run.child.kill("SIGKILL");
    await run.exited();
  };

  it("killed while one cluster's objects are written, the others done: the rerun records the host", async () => {
    const revision = fleet.commit(210);
    const webhook = await holdingWebhook(kube(), {
      name: "hold-c2-statefulset",
      rule: { operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] },
      objectSelector: { "vc.orch.io/inventory": "c2" },
      hold: () => true,
    });
    try {
      await killWhen(
        async () =>
          webhook.held() > 0 &&
          (await hostOf(kube(), "c1")).revision === revision &&
          (await hostOf(kube(), "c3")).revision === revision,
        "c2's StatefulSet held, c1's and c3's written",
      );
    } finally {
      await webhook.close();
    }
    expect((await hostOf(kube(), "c2")).revision, "c2 was cut before its StatefulSet").to.equal(first);
    await expectRecordsAtHost(kube(), fleet.clusters, args(), first, revision, "210m");
  });

  it("killed with every object written and every status write in flight: the rerun records them", async () => {
    const revision = fleet.commit(220);
    const webhook = await holdingWebhook(kube(), {
      name: "hold-status-writes",
      rule: { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
      objectSelector: { "vc.orch.io/record": "record" },
      // The write that records the run: it changes lastAttemptedRevision to the new revision.
      hold: (r) =>
        r.object?.data?.lastAttemptedRevision === revision && r.oldObject?.data?.lastAttemptedRevision !== revision,
    });
    try {
      await killWhen(async () => webhook.held() === fleet.clusters.length, "every cluster's status write held");
    } finally {
      await webhook.close();
    }
    for (const cluster of fleet.clusters) {
      expect((await hostOf(kube(), cluster)).revision, `${cluster}'s objects written`).to.equal(revision);
      expect((await recordsOf(kube())).get(cluster)?.lastAppliedRevision, "no status written").to.not.equal(revision);
    }
    await expectRecordsAtHost(kube(), fleet.clusters, args(), first, revision, "220m");
  });

  it("killed between moving an entry to the history and writing the status: each entry kept once", async () => {
    // Runs until every status holds its 10 newest reconciliations: the next one moves the oldest to the history.
    for (let cpu = 230; [...(await recordsOf(kube())).values()].some((r) => r.entries.length < 10); cpu += 10) {
      expect(cpu, "statuses filled within 12 runs").to.be.below(350);
      fleet.commit(cpu);
      const applied = await runVc(["apply", ...args()]);
      expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    }
    const before = await recordsOf(kube());
    const revision = fleet.commit(400);
    const webhook = await holdingWebhook(kube(), {
      name: "hold-status-writes",
      rule: { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
      objectSelector: { "vc.orch.io/record": "record" },
      hold: (r) =>
        r.object?.data?.lastAttemptedRevision === revision && r.oldObject?.data?.lastAttemptedRevision !== revision,
    });
    try {
      await killWhen(async () => webhook.held() === fleet.clusters.length, "every cluster's status write held");
    } finally {
      await webhook.close();
    }
    // Cut between the two writes: the oldest entry of each status is in its history ConfigMap and still in the status.
    const cut = await recordsOf(kube());
    for (const cluster of fleet.clusters)
      expect(
        duplicates(cut.get(cluster)!.entries),
        `${cluster}: the entry moved, the status not written`,
      ).to.have.length(1);
    await expectRecordsAtHost(kube(), fleet.clusters, args(), first, revision, "400m");
    const after = await recordsOf(kube());
    for (const cluster of fleet.clusters) {
      // Every entry kept before, in order, and the rerun's: none lost, none twice.
      expect(after.get(cluster)!.entries.slice(0, -1), cluster).to.deep.equal(before.get(cluster)!.entries);
    }
  });

  it("killed mid-delete of a cluster removed from the repository (--prune): the rerun prunes, forgets it", async () => {
    const kept = await recordsOf(kube());
    repo.write({ "clusters/c3": null });
    repo.commit("remove c3");
    const prune = ["--prune", "--allow-mass-prune"];
    const webhook = await holdingWebhook(kube(), {
      name: "hold-c3-delete",
      rule: { operations: ["DELETE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] },
      objectSelector: { "vc.orch.io/inventory": "c3" },
      hold: () => true,
    });
    try {
      const run = vcProcess(["apply", ...args(), ...prune]);
      let code: number | null | undefined;
      void run.exited().then((c) => (code = c));
      await waitFor(() => code !== undefined || webhook.held() > 0, "c3's StatefulSet delete held", 120_000);
      expect(code, `the run is held, not ended:\n${run.output()}`).to.equal(undefined);
      run.child.kill("SIGKILL");
      await run.exited();
    } finally {
      await webhook.close();
    }
    expect((await hostOf(kube(), "c3")).revision, "c3's StatefulSet is still there").to.not.equal(undefined);
    const again = await runVc(["apply", ...args(), ...prune]);
    expect(again.code, again.stdout + again.stderr).to.equal(0);
    expect(await hostOf(kube(), "c3"), "c3's StatefulSet pruned").to.deep.equal({});
    const records = await recordsOf(kube());
    // The removed cluster's record is forgotten but for its kept Namespace; no lease of the killed run is left.
    expect(records.get("c3")?.lastAppliedRevision, "c3's status forgotten").to.equal(undefined);
    expect(records.get("c3")?.applying, "c3's apply lease").to.equal(undefined);
    expect(records.get("c3")?.inventory ?? [], "c3's record holds its kept Namespace only").to.deep.equal([
      "Namespace//vc-c3",
    ]);
    // The others had nothing to change: their records as before, at what their objects are at.
    for (const cluster of ["c1", "c2"]) {
      expect(records.get(cluster)?.entries, cluster).to.deep.equal(kept.get(cluster)!.entries);
      expect(records.get(cluster)?.lastAppliedRevision).to.equal((await hostOf(kube(), cluster)).revision);
      expect(records.get(cluster)?.applying, `${cluster}'s apply lease`).to.equal(undefined);
    }
    const diff = await runVc(["diff", ...args(), ...prune.slice(0, 1), "--exit-code"]);
    expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
  });
});
