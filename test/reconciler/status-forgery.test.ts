// A cluster's status is read only from its own host namespace: a look-alike vc-status ConfigMap elsewhere neither
// suspends it nor rewrites its history; a damaged stored history is left out with a warning.
import { expect } from "chai";
import { fromData } from "../../src/reconciler/status.js";
import { newPassState, runPass } from "../../src/reconciler/pass.js";
import { STATUS_CONFIGMAP, STATUS_LABEL, SUSPENDED_BY_ANNOTATION } from "../../src/reconciler/status-store.js";
import { LABELS } from "../../src/translate/keys.js";
import { Bed, name } from "./harness.js";

describe("reconciler: status cannot be forged", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(2, 1);
  });
  afterEach(() => bed.close());

  it("a vc-status ConfigMap for a cluster in another namespace neither suspends it nor replaces its history", async () => {
    const victim = name(1);
    const first = await runPass(bed.deps(), newPassState(), { kind: "full" });
    expect(first.clusters.every((c) => c.result === "applied")).to.equal(true);
    const history = JSON.parse(bed.statusData(victim)!.history) as unknown[];
    bed.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "zz-attacker" } });
    bed.kube.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: STATUS_CONFIGMAP, namespace: "zz-attacker", labels: { [STATUS_LABEL]: "true", [LABELS.managedBy]: victim }, annotations: { [SUSPENDED_BY_ANNOTATION]: "an attacker" } },
      data: { cluster: victim, hostNamespace: `vc-${victim}`, history: "[]" },
    });
    const logs: string[] = [];
    const logger = { debug() {}, info() {}, warn: (msg: string) => logs.push(msg), error() {} };
    const second = await runPass(bed.deps({ logger }), newPassState(), { kind: "full" });
    expect(second.clusters.find((c) => c.cluster === victim)!.result).to.equal("applied");
    expect(logs).to.include("ignoring a status outside the cluster's host namespace");
    const after = JSON.parse(bed.statusData(victim)!.history) as unknown[];
    expect(after).to.deep.equal(history);
  });

  it("a damaged history ([null], entries of the wrong shape, not JSON) is left out, and the rest still reads", () => {
    const good = { revision: "abc", time: "2026-11-24T00:00:00Z", result: "applied" };
    const s = fromData({ cluster: "x", hostNamespace: "vc-x", history: JSON.stringify([null, good, 7, { revision: 1 }]) })!;
    expect(s.history).to.deep.equal([good]);
    expect(s.damagedHistory).to.equal(3);
    expect(fromData({ cluster: "x", history: "not json" })!.history).to.deep.equal([]);
    expect(fromData({ cluster: "x", history: "{}" })!.damagedHistory).to.equal(1);
  });
});
