// The API server down mid-apply, then a rerun, on a real API server: the second fault row. A webhook holds a
// write so the outage lands provably mid-run; the server is then frozen (SIGSTOP: connections taken, nothing
// answered) or killed (SIGKILL: connections refused) until `vc apply` gives up, and brought back. After the rerun
// every record says the revision the host has, and every reconciliation is kept exactly once.
import { expect } from "chai";
import type { TestRepo } from "../support/git-server.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import {
  expectRecordsAtHost,
  holdingWebhook,
  hostOf,
  recordsOf,
  smallFleet,
  vcProcess,
} from "../support/record-faults.js";
import { runVc } from "../support/vc.js";

describe("e2e: the API server down mid-apply, then vc apply again", function () {
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

  /**
   * Runs `vc apply` as its own process (requests bounded at 5 s) until `held`, then takes the server `down`, waits
   * for the run to give up on it, and brings the server `up` again.
   */
  const outage = async (held: () => boolean, down: () => Promise<void> | void, up: () => Promise<void> | void) => {
    const run = vcProcess(["apply", ...args(), "--request-timeout", "5s"]);
    let code: number | null | undefined;
    void run.exited().then((c) => (code = c));
    try {
      await waitFor(() => code !== undefined || held(), "the run held at its write", 120_000);
      expect(code, `the run is held, not ended:\n${run.output()}`).to.equal(undefined);
      await down();
      const ended = await run.exited();
      expect(ended, `the run fails while the server is down:\n${run.output()}`).to.equal(2);
    } finally {
      await up();
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGKILL");
      await run.exited();
    }
  };

  it("frozen with every object written and every status write in flight: the rerun records them", async () => {
    const revision = fleet.commit(210);
    const webhook = await holdingWebhook(kube(), {
      name: "hold-status-writes",
      rule: { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
      objectSelector: { "vc.orch.io/record": "record" },
      hold: (r) =>
        r.object?.data?.lastAttemptedRevision === revision && r.oldObject?.data?.lastAttemptedRevision !== revision,
    });
    try {
      await outage(
        () => webhook.held() === fleet.clusters.length,
        () => {
          kube().freeze();
          // The held writes are refused once the server goes on (the webhook is gone by then).
          webhook.stopHolding();
          webhook.fail();
        },
        () => kube().thaw(),
      );
    } finally {
      await webhook.close();
    }
    for (const cluster of fleet.clusters) {
      expect((await hostOf(kube(), cluster)).revision, `${cluster}'s objects written`).to.equal(revision);
      expect((await recordsOf(kube())).get(cluster)?.lastAppliedRevision, "no status written").to.not.equal(revision);
    }
    await expectRecordsAtHost(kube(), fleet.clusters, args(), first, revision, "210m");
  });

  it("killed while one cluster's objects are written, the others done, restarted: records = host", async () => {
    const revision = fleet.commit(220);
    const webhook = await holdingWebhook(kube(), {
      name: "hold-c2-statefulset",
      rule: { operations: ["UPDATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] },
      objectSelector: { "vc.orch.io/inventory": "c2" },
      hold: () => true,
    });
    try {
      await outage(
        () => webhook.held() > 0,
        async () => {
          webhook.stopHolding();
          await kube().kill();
        },
        () => kube().restart(),
      );
    } finally {
      await webhook.close();
    }
    expect((await hostOf(kube(), "c2")).revision, "c2 was cut before its StatefulSet").to.not.equal(revision);
    await expectRecordsAtHost(kube(), fleet.clusters, args(), first, revision, "220m");
  });
});
