// A cluster's status is read only from its record in the records namespace: a look-alike vc-status ConfigMap in its
// own host namespace or elsewhere neither suspends it nor rewrites its history; a damaged stored history is left out.
import { expect } from "chai";
import { fromData } from "../../src/records/status.js";
import { newPassState, runPass } from "../../src/reconciler/pass.js";
import { STATUS_CONFIGMAP, STATUS_LABEL, SUSPENDED_BY_ANNOTATION } from "../../src/records/status-store.js";
import { LABELS } from "../../src/translate/keys.js";
import { Bed, name } from "./harness.js";

describe("reconciler: status cannot be forged", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(2, 1);
  });
  afterEach(() => bed.close());

  for (const where of ["another namespace", "its own host namespace"]) {
    it(`a vc-status ConfigMap for a cluster in ${where} neither suspends it nor replaces its history`, async () => {
      const victim = name(1);
      const first = await runPass(bed.deps(), newPassState(), { kind: "full" });
      expect(first.clusters.every((c) => c.result === "applied")).to.equal(true);
      const history = JSON.parse(bed.statusData(victim)!.history) as unknown[];
      const ns = where === "another namespace" ? "zz-attacker" : `vc-${victim}`;
      bed.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "zz-attacker" } });
      const forged = { cluster: victim, hostNamespace: `vc-${victim}`, result: "failed", history: "[]" };
      bed.kube.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: STATUS_CONFIGMAP,
          namespace: ns,
          labels: { [STATUS_LABEL]: "true", [LABELS.managedBy]: victim },
          annotations: { [SUSPENDED_BY_ANNOTATION]: "an attacker" },
        },
        data: forged,
      });
      bed.kube.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "vc-history", namespace: ns, labels: { [LABELS.managedBy]: victim } },
        data: { cluster: victim, history: "[]" },
      });
      const second = await runPass(bed.deps(), newPassState(), { kind: "full" });
      expect(second.clusters.find((c) => c.cluster === victim)!.result).to.equal("applied");
      const after = JSON.parse(bed.statusData(victim)!.history) as unknown[];
      expect(after).to.deep.equal(history);
      expect(bed.record(victim)!.metadata.annotations?.[SUSPENDED_BY_ANNOTATION]).to.equal(undefined);
      // vc never wrote nor deleted the forgeries: they are the tenant's own ConfigMaps, read by nothing.
      expect(bed.kube.get("v1", "ConfigMap", ns, STATUS_CONFIGMAP)!.data).to.deep.equal(forged);
    });
  }

  it("a damaged history ([null], entries of the wrong shape, not JSON) is left out, and the rest still reads", () => {
    const good = { revision: "abc", time: "2026-11-24T00:00:00Z", result: "applied" };
    const s = fromData({
      cluster: "x",
      hostNamespace: "vc-x",
      history: JSON.stringify([null, good, 7, { revision: 1 }]),
    })!;
    expect(s.history).to.deep.equal([good]);
    expect(s.damagedHistory).to.equal(3);
    expect(fromData({ cluster: "x", history: "not json" })!.history).to.deep.equal([]);
    expect(fromData({ cluster: "x", history: "{}" })!.damagedHistory).to.equal(1);
  });
});
