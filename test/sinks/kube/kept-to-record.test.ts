// A fleet's live inventory kept to its records in one walk (keptToRecords) answers what keeping each cluster's in
// turn (keptToRecord) answers: the objects labelled for the cluster that its record holds, in the LIST's order.
import { expect } from "chai";
import { keptToRecord, keptToRecords } from "../../../src/sinks/kube/target.js";
import { objectKey, type KubeObject } from "../../../src/kube/object.js";
import type { ClusterRecord } from "../../../src/records/record.js";

const object = (kind: string, name: string, cluster: string | undefined): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: {
    name,
    namespace: "vc-shared",
    ...(cluster === undefined ? {} : { labels: { "vc.orch.io/inventory": cluster } }),
  },
});
const record = (cluster: string, inventory: string[]): ClusterRecord => ({
  source: "",
  cluster,
  hostNamespace: `vc-${cluster}`,
  inventory,
});

describe("sinks/kube keptToRecords", () => {
  it("keeps each cluster's labelled objects that its record holds, as keptToRecord does one cluster at a time", () => {
    const labelled = [
      object("ConfigMap", "a1", "a"),
      object("Secret", "b1", "b"),
      object("ConfigMap", "a2", "a"),
      object("ConfigMap", "stray", "a"), // labelled for a, not in a's record: a tenant's label is no claim
      object("ConfigMap", "b-as-a", "a"), // b's record names it, but it is labelled for a
      object("ConfigMap", "unlabelled", undefined),
      object("ConfigMap", "c1", "c"), // c has no record
    ];
    const records = new Map([
      ["a", record("a", [objectKey(labelled[0]!), objectKey(labelled[2]!)])],
      ["b", record("b", [objectKey(labelled[1]!), objectKey(labelled[4]!)])],
      ["d", record("d", ["ConfigMap/vc-shared/gone"])],
    ]);
    const clusters = ["d", "c", "b", "a"];
    const kept = keptToRecords(labelled, clusters, records);
    expect([...kept.keys()]).to.deep.equal(clusters);
    for (const c of clusters) expect(kept.get(c), c).to.deep.equal(keptToRecord(labelled, c, records.get(c)));
    expect(kept.get("a")!.map((o) => o.metadata.name)).to.deep.equal(["a1", "a2"]);
    expect(kept.get("b")!.map((o) => o.metadata.name)).to.deep.equal(["b1"]);
    expect(kept.get("c")).to.deep.equal([]);
    expect(kept.get("d")).to.deep.equal([]);
  });
});
