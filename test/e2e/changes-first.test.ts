// On a real API server: during the reconciler's start-up pass (no pass completed yet), a commit in a git checkout, a
// file written in a plain folder, or a commit pushed to the mirrored remote (its webhook) that touches the cluster the
// pass reaches last is applied before the pass's next chunk, and the pass does not reconcile that cluster again
// (issue #35). The order of the `reconciled` events decides, never the time things took.
import { expect } from "chai";
import { KubeClient } from "../../src/host/client.js";
import { readClusterHealth } from "../../src/health/read.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { changesFirst, changesFirstProblems } from "../support/changes-first.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";

for (const mode of ["git", "top", "remote"] as const)
  describe(`e2e: changes before chores during the start-up pass on a real API server (${mode})`, function () {
    this.timeout(300_000);
    const kube = useRealKube();
    let client: KubeClient;
    before(async () => {
      await installMeshCrds(kube());
      client = KubeClient.open({ kubeconfig: kube().kubeconfigPath, context: "e2e" });
    });
    after(() => client?.close());

    it("applies the change before the pass's next chunk, then skips that cluster", async () => {
      const target = new KubeTarget(client);
      const run = await changesFirst({
        mode,
        context: {
          target,
          store: new KubeStatusStore(client, { source: target.source, records: target.records }),
          allowMassPrune: false,
          mayWrite: () => true,
          health: (ns, desired) => readClusterHealth(client, ns, desired),
        },
      });
      expect(changesFirstProblems(run)).to.deep.equal([]);
      const sts = await kube().request<{
        spec: { template: { spec: { containers: Array<{ resources?: { requests?: { cpu?: string } } }> } } };
      }>("GET", `/apis/apps/v1/namespaces/vc-${run.changed}/statefulsets/${run.changed}`);
      expect(sts.status).to.equal(200);
      expect(sts.body.spec.template.spec.containers.map((c) => c.resources?.requests?.cpu)).to.include(run.cpu);
    });
  });
