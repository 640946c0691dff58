// Abort ends only once the moved clusters are back: a move back that fails to apply (the server refuses the write)
// keeps the rollout Aborting and is tried again, never reported `Aborted` with the cluster still at the target base.
import { expect } from "chai";
import { readClusterHealth } from "../../src/health/read.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { RolloutStore, rolloutName } from "../../src/rollout/store.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import type { PassDeps, PassState } from "../../src/reconciler/pass.js";
import { Bed, name, newPassState, runPass } from "../reconciler/harness.js";

const tagValues = (tag: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n`;
const ROLLOUT =
  'waves:\n  - name: canary\n    selector: {matchLabels: {canary: "true"}}\n  - name: rest\nhealthGate: {timeout: 1h}\n';

describe("rollout: abort waits for the moved clusters to be back", function () {
  this.timeout(60_000);
  let bed: Bed;
  let deps: PassDeps;
  let state: PassState;
  const canary = name(0);
  const record = (): RolloutRecord =>
    JSON.parse(
      (bed.kube.get("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE, rolloutName(""))!.data as Record<string, string>)
        .rollout!,
    ) as RolloutRecord;
  const tagOf = (c: string): string => /"image":"[^"]*:([^"]+)"/.exec(JSON.stringify(bed.statefulSet(c)!.spec))![1]!;
  const pass = () => runPass(deps, state, { kind: "incremental" });

  before(async () => {
    bed = await Bed.start(2, 0);
    bed.repo.write({ "fleet/values.yaml": tagValues("1.0"), "fleet/rollout.yaml": ROLLOUT });
    bed.edit(`clusters/${canary}/cluster.yaml`, /$/, 'labels:\n  canary: "true"\n');
    bed.repo.commit("fleet base and rollout");
    const client = bed.client();
    deps = bed.deps({ health: (ns, desired) => readClusterHealth(client, ns, desired) });
    state = newPassState();
    await runPass(deps, state, { kind: "full" });
    bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
    bed.repo.commit("new control-plane tag");
    await pass();
    expect(record()).to.deep.include({ phase: "Progressing", wave: 0 });
    expect(tagOf(canary)).to.equal("2.0");
  });
  after(() => bed?.close());

  it(
    "a move back the server refuses leaves the rollout Aborting (the cluster is still at the target), and a later " +
      "pass brings it back",
    async () => {
      await new RolloutStore(bed.client(), DEFAULT_RECORDS_NAMESPACE).request("", {
        action: "abort",
        by: "alice",
        at: new Date().toISOString(),
      });
      // Every write to the canary's namespace fails while the abort's move back runs.
      const fault = bed.kube.faults.add({
        path: new RegExp(`/namespaces/vc-${canary}/`),
        method: "PATCH",
        status: 500,
      });
      const aborting = await pass();
      expect(record().phase).to.equal("Aborting");
      expect(aborting.clusters.find((r) => r.cluster === canary)?.result).to.equal("failed");
      expect(tagOf(canary)).to.equal("2.0");
      await pass();
      // Still at the target base: the abort is not done.
      expect(tagOf(canary)).to.equal("2.0");
      expect(record().phase, record().message).to.equal("Aborting");
      fault.remove();
      for (let i = 0; i < 3 && record().phase !== "Aborted"; i++) await pass();
      expect(tagOf(canary)).to.equal("1.0");
      expect(record().phase).to.equal("Aborted");
    },
  );
});
