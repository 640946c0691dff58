// The reconciler and changes the API server refuses in place: blocked with the message, or recreated with cluster.yaml
// force: true.
import { expect } from "chai";
import { Bed, name, newPassState, runPass } from "./harness.js";

describe("reconciler: immutable changes", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(2);
  });
  afterEach(() => bed.close());

  it(
    "reports a persistence.size change as blocked and applies nothing of that cluster, until cluster.yaml says " +
      "force: true",
    async () => {
      const deps = bed.deps();
      const state = newPassState();
      await runPass(deps, state, { kind: "full" });
      const c = name(0); // even clusters have persistence on
      const uid = bed.statefulSet(c)!.metadata.uid;
      bed.edit(`clusters/${c}/values.yaml`, "size: 10Gi", "size: 20Gi");
      bed.repo.commit("bigger volumes");
      bed.kube.resetRequests();
      const blocked = await runPass(deps, state, { kind: "incremental" });
      expect(blocked.clusters.map((r) => [r.cluster, r.result])).to.deep.equal([[c, "blocked"]]);
      expect(blocked.clusters[0]!.message)
        .to.include(`StatefulSet vc-${c}/${c} (spec.volumeClaimTemplates)`)
        .and.include(`force: true in clusters/${c}/cluster.yaml`);
      // Only the status ConfigMap was written: not the config Secret, not the StatefulSet.
      const writes = bed.kube.requests.filter((r) => ["PATCH", "PUT", "POST", "DELETE"].includes(r.method));
      expect(writes.map((r) => r.resource)).to.deep.equal(["configmaps"]);
      expect(bed.statusData(c)).to.include({ result: "blocked" });

      bed.edit(`clusters/${c}/cluster.yaml`, /$/, "\nforce: true\n");
      bed.repo.commit("let the reconciler recreate");
      const forced = await runPass(deps, state, { kind: "incremental" });
      expect(forced.clusters.map((r) => [r.cluster, r.result])).to.deep.equal([[c, "applied"]]);
      const sts = bed.statefulSet(c)! as any;
      expect(sts.metadata.uid).to.not.equal(uid);
      expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.equal("20Gi");
      const del = bed.kube.requests.find((r) => r.method === "DELETE" && r.resource === "statefulsets");
      expect(del, "an orphan delete of the StatefulSet").to.not.equal(undefined);
    },
  );

  it(
    "reports a cluster whose mesh kinds the host does not serve as blocked with one message; nothing of it is " +
      "applied",
    async () => {
      bed.kube.faults.add({ path: /^\/apis\/networking\.mesh\.io\//, status: 404 });
      const res = await runPass(bed.deps(), newPassState(), { kind: "full" });
      expect(res.clusters.map((r) => r.result)).to.deep.equal(["blocked", "blocked"]);
      expect(res.clusters[0]!.message).to.match(
        /^the host does not serve DestinationRule, Gateway, VirtualService \(networking\.mesh\.io\/v1beta1\): the mesh's custom resource definitions are missing/,
      );
      expect(bed.statefulSet(name(0))).to.equal(undefined);
    },
  );
});
