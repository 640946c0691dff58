// The reconciler decides the public host claims of a pass before any write: two new clusters claiming one host in the
// same pass are not both applied (the name that sorts first wins), whatever order their concurrent syncs run in.
import { expect } from "chai";
import { Bed, name, newPassState, runPass } from "./harness.js";

const API = "networking.mesh.io/v1beta1";

describe("reconciler: public host claims within one pass", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(3);
  });
  afterEach(() => bed.close());

  it(
    "of new clusters claiming one host in one pass exactly one is applied (first name wins); the loser writes " +
      "nothing, also in the next passes",
    async () => {
      // name(1) and name(2) both claim name(0)'s host; none of the three is live yet; name(2) (checkout-…) sorts first.
      const host = "s0000.example.com";
      const [winner, ...losers] = [name(0), name(1), name(2)].sort();
      expect(winner).to.equal(name(2));
      for (const i of [1, 2])
        bed.edit(`clusters/${name(i)}/mesh/gateway.yaml`, new RegExp(`s000${i}\\.example\\.com`, "g"), host);
      bed.repo.commit("three new clusters claim one public host");
      const state = newPassState();
      for (const concurrency of [4, 1]) {
        const deps = bed.deps({ concurrency }, `mirror-${concurrency}`);
        const res = await runPass(deps, state, { kind: "full" });
        const by = new Map(res.clusters.map((c) => [c.cluster, c]));
        expect(by.get(winner!)!.result, by.get(winner!)!.message).to.equal("applied");
        for (const loser of losers) {
          expect(by.get(loser)!.result, loser).to.equal("blocked");
          expect(by.get(loser)!.message).to.include(`public host "${host}" belongs to cluster ${winner}`);
          expect(bed.kube.list(API, "Gateway", `vc-${loser}`), loser).to.have.length(0);
          expect(bed.kube.list(API, "VirtualService", `vc-${loser}`), loser).to.have.length(0);
        }
        expect(bed.kube.list(API, "Gateway", `vc-${winner}`)).to.have.length(1);
      }
    },
  );

  it("an incremental pass that brings two new claimants decides them the same way", async () => {
    const state = newPassState();
    const deps = bed.deps();
    await runPass(deps, state, { kind: "full" });
    // One new host claimed by two live clusters at once (name(0) and name(2)).
    bed.edit(`clusters/${name(0)}/mesh/gateway.yaml`, /s0000\.example\.com/g, "new.example.com");
    bed.edit(`clusters/${name(2)}/mesh/gateway.yaml`, /s0002\.example\.com/g, "new.example.com");
    bed.repo.commit("two clusters move to one new host");
    const res = await runPass(deps, state, { kind: "incremental" });
    const by = new Map(res.clusters.map((c) => [c.cluster, c]));
    // name(2) (checkout-…) sorts before name(0) (payments-…).
    expect(by.get(name(2))!.result, by.get(name(2))!.message).to.equal("applied");
    expect(by.get(name(0))!.result).to.equal("blocked");
    expect(by.get(name(0))!.message, by.get(name(0))!.message).to.include(
      `public host "new.example.com" belongs to cluster ${name(2)}`,
    );
    const live = JSON.stringify(bed.kube.list(API, "Gateway", `vc-${name(0)}`));
    expect(live, "the loser's Gateway keeps its old host")
      .to.include("s0000.example.com")
      .and.not.include("new.example.com");
  });
});
