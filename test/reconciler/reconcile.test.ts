// The reconciler end to end: real git server, Kubernetes API test server as host, real load/render/plan/apply.
import { expect } from "chai";
import { ANNOTATIONS, LABELS } from "../../src/translate/keys.js";
import { INVENTORY_TYPES } from "../../src/sinks/kube/target.js";
import { suspendCluster, resumeCluster } from "../../src/records/suspend.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { HOST_NAMESPACE_LABEL, RECORD_LABEL } from "../../src/records/record.js";
import { Bed, name, newPassState, runPass } from "./harness.js";

describe("reconciler against a git server and the API test server", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(8);
  });
  afterEach(() => bed.close());

  it(
    "applies the whole fleet once, then a commit touching one cluster costs only that cluster's " + "requests",
    async () => {
      const deps = bed.deps();
      const state = newPassState();
      const first = await runPass(deps, state, { kind: "full" });
      expect(first.clusters.map((c) => c.result)).to.deep.equal(Array(8).fill("applied"));
      const c0 = bed.repo.head();
      expect(bed.statefulSet(name(3))!.metadata.annotations![ANNOTATIONS.revision]).to.equal(c0);
      expect(bed.statusData(name(3))).to.include({ result: "applied", lastAppliedRevision: c0 });

      // Nothing new: no API request at all.
      bed.kube.resetRequests();
      const idle = await runPass(deps, state, { kind: "incremental" });
      expect(idle.clusters).to.deep.equal([]);
      expect(bed.kube.requests.length).to.equal(0);

      bed.edit(`clusters/${name(3)}/values.yaml`, /cpu: \d+m/, "cpu: 300m");
      const c1 = bed.repo.commit("more cpu for one cluster");
      bed.kube.resetRequests();
      const res = await runPass(deps, state, { kind: "incremental" });
      expect(res.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([[name(3), "applied"]]);
      // The StatefulSet and the Secret holding the values change; the other objects of the cluster do not.
      const updated = res.clusters[0]!.sync!.counts.updated;
      expect(updated).to.equal(2);
      // One LIST per inventory kind; vc's records of the cluster: one LIST naming it (is it migrated; the pass's memo
      // keeps what it found and answers the inventory and status reads that follow, and the records claiming the
      // cluster, records/store.ts: no GET) and one LIST of the records claiming its namespace; the host's public-host
      // claims (the cluster serves a Gateway host): two LISTs and one of the records holding them; one apply per
      // changed object, one write of its record before them (the run's apply lease) and one after (the status, the
      // lease given up): nothing for the 7 others.
      const claims = bed.kube.requests.filter((r) =>
        new RegExp(`labelSelector=${LABELS.inventory}(&|$)`).test(decodeURIComponent(r.query)),
      );
      expect(claims.map((r) => r.resource).sort()).to.deep.equal(["gateways", "virtualservices"]);
      // The objects vc plans on are LISTed from the server's watch cache; the claims and vc's records from its store, a
      // page at a time (each page reduced before the next: a fleet's Gateways are never all held at once).
      const lists = bed.kube.requests.filter((r) => r.verb === "list");
      const fromCache = (r: { query: string }) => new URLSearchParams(r.query).get("resourceVersion") === "0";
      const paged = (r: { query: string }) => Number(new URLSearchParams(r.query).get("limit")) > 0;
      const fromStore = (r: { resource?: string; namespace?: string }) =>
        (r.resource === "configmaps" && r.namespace === "vc-system") || claims.includes(r as (typeof claims)[number]);
      expect(lists.filter((r) => !fromStore(r)).every(fromCache)).to.equal(true);
      expect(lists.filter(fromStore).some(fromCache)).to.equal(false);
      expect(claims.every(paged), "the claims are LISTed a page at a time").to.equal(true);
      expect(bed.kube.countRequests({ method: "GET" })).to.equal(INVENTORY_TYPES.length + 2 + 3);
      expect(
        bed.kube.requests.filter(
          (r) =>
            r.method === "GET" && r.path.startsWith(`/api/v1/namespaces/vc-system/configmaps/vc-record-${name(3)}-`),
        ),
      ).to.have.length(0);
      expect(bed.kube.countRequests({ method: "PATCH" })).to.equal(updated + 2);
      expect(bed.kube.requests.length).to.equal(INVENTORY_TYPES.length + 2 + 3 + updated + 2);
      // The records holding those claims: one LIST of every record (claims are held by any cluster of any source).
      const claimRecords = bed.kube.requests.filter(
        (r) =>
          r.resource === "configmaps" &&
          decodeURIComponent(r.query).startsWith("labelSelector=vc.orch.io/record=record&"),
      );
      expect(claimRecords.length).to.equal(1);
      for (const r of bed.kube.requests.filter((x) => !claims.includes(x) && !claimRecords.includes(x))) {
        const text = decodeURIComponent(`${r.path}?${r.query}`);
        expect(text.includes(name(3)), text).to.equal(true);
      }
      const sts = bed.statefulSet(name(3))!;
      expect(JSON.stringify(sts)).to.include("300m");
      expect(sts.metadata.annotations![ANNOTATIONS.revision]).to.equal(c1);
      expect(bed.statefulSet(name(2))!.metadata.annotations![ANNOTATIONS.revision]).to.equal(c0);
      expect(bed.statusData(name(3))).to.include({ lastAppliedRevision: c1 });
    },
  );

  it(
    "keeps the last good revision live when a commit makes a cluster invalid, and says why; other " + "clusters go on",
    async () => {
      const deps = bed.deps();
      const state = newPassState();
      await runPass(deps, state, { kind: "full" });
      const good = bed.repo.head();
      bed.edit(`clusters/${name(1)}/values.yaml`, /cpu: \d+m/, "cpu: lots");
      bed.edit(`clusters/${name(2)}/values.yaml`, /cpu: \d+m/, "cpu: 600m");
      const bad = bed.repo.commit("typo in one cluster, change in another");
      const res = await runPass(deps, state, { kind: "incremental" });
      const byName = Object.fromEntries(res.clusters.map((c) => [c.cluster, c]));
      expect(byName[name(1)]!.result).to.equal("invalid");
      expect(byName[name(1)]!.message).to.match(new RegExp(`clusters/${name(1)}/values.yaml:\\d+:\\d+`));
      expect(byName[name(1)]!.message).to.include(`${good.slice(0, 12)} stays live`);
      expect(byName[name(2)]!.result).to.equal("applied");
      expect(res.problems).to.equal(1);
      const sts = bed.statefulSet(name(1))!;
      expect(sts.metadata.annotations![ANNOTATIONS.revision]).to.equal(good);
      expect(JSON.stringify(sts)).to.not.include("lots");
      const status = bed.statusData(name(1))!;
      expect(status).to.include({ result: "invalid", lastAppliedRevision: good, lastAttemptedRevision: bad });
      expect(JSON.parse(status.history!)).to.have.length(2);

      // The fix applies.
      bed.edit(`clusters/${name(1)}/values.yaml`, /cpu: lots/, "cpu: 250m");
      const fixed = bed.repo.commit("fix");
      const again = await runPass(deps, state, { kind: "incremental" });
      expect(again.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([[name(1), "applied"]]);
      expect(bed.statusData(name(1))).to.include({ result: "applied", lastAppliedRevision: fixed });
    },
  );

  it("follows a force-push: clusters changed by the discarded commit are put back", async () => {
    const deps = bed.deps();
    const state = newPassState();
    await runPass(deps, state, { kind: "full" });
    const base = bed.repo.head();
    bed.edit(`clusters/${name(4)}/values.yaml`, /cpu: \d+m/, "cpu: 900m");
    bed.repo.commit("to be discarded");
    await runPass(deps, state, { kind: "incremental" });
    expect(JSON.stringify(bed.statefulSet(name(4)))).to.include("900m");

    bed.repo.run("reset", "-q", "--hard", base);
    bed.edit(`clusters/${name(5)}/values.yaml`, /cpu: \d+m/, "cpu: 700m");
    const rewritten = bed.repo.commit("rewritten history", { force: true });
    const res = await runPass(deps, state, { kind: "incremental" });
    expect(res.revision).to.equal(rewritten);
    expect(res.clusters.map((c) => c.cluster)).to.have.members([name(4), name(5)]);
    expect(JSON.stringify(bed.statefulSet(name(4)))).to.not.include("900m");
    expect(JSON.stringify(bed.statefulSet(name(5)))).to.include("700m");
  });

  it("does not reconcile a suspended cluster (cluster.yaml or at run time) and resumes afterwards", async () => {
    const deps = bed.deps();
    const state = newPassState();
    await runPass(deps, state, { kind: "full" });
    bed.edit(`clusters/${name(4)}/cluster.yaml`, "suspend: false", "suspend: true");
    bed.edit(`clusters/${name(4)}/values.yaml`, /cpu: \d+m/, "cpu: 800m");
    await runPass(deps, state, { kind: "incremental" });
    bed.repo.commit("suspend and change");
    const res = await runPass(deps, state, { kind: "incremental" });
    expect(res.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([[name(4), "suspended"]]);
    expect(JSON.stringify(bed.statefulSet(name(4)))).to.not.include("800m");
    expect(bed.statusData(name(4))).to.include({ result: "suspended", message: "suspended in cluster.yaml" });

    // Run-time suspension (vc restore): the annotation on its record stops the next run too.
    const client = bed.client();
    await suspendCluster(client, name(6), `vc-${name(6)}`, "vc restore oci://registry/backup:1");
    bed.edit(`clusters/${name(6)}/values.yaml`, /cpu: \d+m/, "cpu: 550m");
    bed.repo.commit("change a cluster being restored");
    const during = await runPass(deps, state, { kind: "incremental" });
    expect(during.clusters.map((c) => [c.cluster, c.result, c.message])).to.deep.equal([
      [name(6), "suspended", "suspended by vc restore oci://registry/backup:1"],
    ]);
    expect(JSON.stringify(bed.statefulSet(name(6)))).to.not.include("550m");
    await resumeCluster(client, name(6), `vc-${name(6)}`);
    const cm = bed.record(name(6))!;
    expect(cm.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(undefined);
    const after = await runPass(deps, state, { kind: "full" });
    expect(after.clusters.find((c) => c.cluster === name(6))!.result).to.equal("applied");
    expect(JSON.stringify(bed.statefulSet(name(6)))).to.include("550m");
  });

  it("prunes a deleted cluster folder only through the prune guard", async () => {
    const deps = bed.deps();
    const state = newPassState();
    await runPass(deps, state, { kind: "full" });
    const before = bed.kube.list("apps/v1", "StatefulSet").length;
    bed.repo.write({ [`clusters/${name(2)}`]: null });
    const gone = bed.repo.commit("remove a cluster");
    const res = await runPass(deps, state, { kind: "incremental" });
    expect(res.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([[name(2), "blocked"]]);
    expect(res.clusters[0]!.message)
      .to.match(/prune guard/)
      .and.to.include("--allow-mass-prune");
    expect(bed.statefulSet(name(2))).to.not.equal(undefined);
    expect(bed.statusData(name(2))).to.include({ result: "blocked", lastAttemptedRevision: gone });

    // With --allow-mass-prune the next full resync deletes exactly that cluster's inventory.
    const allowed = { ...deps, allowMassPrune: true };
    const res2 = await runPass(allowed, state, { kind: "full" });
    const run = res2.clusters.find((c) => c.cluster === name(2))!;
    expect(run.result).to.equal("deleted");
    expect(bed.statefulSet(name(2))).to.equal(undefined);
    expect(bed.kube.list("apps/v1", "StatefulSet").length).to.equal(before - 1);
    const left = bed.kube.list("v1", "ConfigMap").filter((o) => o.metadata.labels?.[LABELS.inventory] === name(2));
    expect(left).to.deep.equal([]);
    expect(res2.clusters.filter((c) => c.cluster !== name(2)).every((c) => c.result === "applied")).to.equal(true);

    // Only its kept Namespace is left: later passes, without --allow-mass-prune, neither block nor write a status.
    expect(bed.kube.get("v1", "Namespace", undefined, `vc-${name(2)}`)?.metadata.labels?.[LABELS.inventory]).to.equal(
      name(2),
    );
    for (const kind of ["full", "full"] as const) {
      bed.kube.resetRequests();
      const later = await runPass(deps, state, { kind });
      const again = later.clusters.find((c) => c.cluster === name(2));
      expect(again?.result, again?.message).to.equal("deleted");
      expect(again!.message).to.include(`only its kept Namespace vc-${name(2)} is left`);
      // Its status is forgotten; its record keeps the kept Namespace, so that no other cluster or source may claim it.
      expect(bed.statusData(name(2))?.result).to.equal(undefined);
      expect(JSON.parse(bed.statusData(name(2))!.inventory!)).to.deep.equal([`Namespace//vc-${name(2)}`]);
      expect(bed.writes()).to.equal(0);
    }
  });

  it("a full resync corrects drift made on the host, and a no-op resync writes nothing", async () => {
    const deps = bed.deps();
    const state = newPassState();
    await runPass(deps, state, { kind: "full" });
    bed.kube.resetRequests();
    await runPass(deps, state, { kind: "full" });
    expect(bed.writes()).to.equal(0);
    const sts = bed.statefulSet(name(0))!;
    (sts.spec as { replicas: number }).replicas = 5;
    bed.kube.put(sts);
    const res = await runPass(deps, state, { kind: "full" });
    expect(res.clusters.find((c) => c.cluster === name(0))!.sync!.counts.updated).to.equal(1);
    expect((bed.statefulSet(name(0))!.spec as { replicas: number }).replicas).to.equal(1);
  });

  it("splits the fleet between shards: each replica reconciles a disjoint part, together all of it", async () => {
    const shard0 = await runPass(bed.deps({ shard: { index: 0, count: 2 } }, "m0"), newPassState(), { kind: "full" });
    const shard1 = await runPass(bed.deps({ shard: { index: 1, count: 2 } }, "m1"), newPassState(), { kind: "full" });
    const a = shard0.clusters.map((c) => c.cluster);
    const b = shard1.clusters.map((c) => c.cluster);
    expect(a.length).to.be.greaterThan(0);
    expect(b.length).to.be.greaterThan(0);
    expect(a.filter((n) => b.includes(n))).to.deep.equal([]);
    expect([...a, ...b].sort()).to.deep.equal(Array.from({ length: 8 }, (_, i) => name(i)).sort());
    const statuses = await new KubeStatusStore(bed.client()).list();
    expect(statuses.map((s) => [s.cluster, s.result])).to.deep.equal([...a, ...b].sort().map((n) => [n, "applied"]));
  });

  it("goes through a full resync chunk by chunk: one LIST per kind per chunk, never one per object", async () => {
    const deps = bed.deps({ chunkSize: 3 });
    await runPass(deps, newPassState(), { kind: "full" });
    bed.repo.write({ [`clusters/${name(7)}`]: null });
    bed.repo.commit("remove one");
    bed.kube.resetRequests();
    const res = await runPass({ ...deps, allowMassPrune: true }, newPassState(), { kind: "full" });
    expect(res.clusters.map((c) => [c.cluster, c.result])).to.have.deep.members(
      Array.from({ length: 8 }, (_, i) => [name(i), i === 7 ? "deleted" : "applied"]),
    );
    // One LIST of the records for the pass's start (statuses, migration check, clusters on the host: the pass's memo,
    // records/store.ts) + labelled namespaces (legacy clusters to migrate), then ceil(8 / 3) = 3 chunks of one LIST
    // per kind and two of the records, each naming the chunk's clusters or their host namespaces (the chunk's
    // inventories and its claims on clusters and namespaces; the removed cluster's record read before its status is
    // forgotten: from them), never every record of the host per chunk (O(N²) in a pass at 10,000 clusters); the live
    // public-host claims (two LISTs and one of every record, for the records holding them) read by the first chunk and
    // read again once the prune deleted a Gateway (a claim gone); the writes are the prune and, on its record, the
    // run's apply lease before it, the inventory left (its kept Namespace) and the status forgotten: no status of
    // another cluster. A full pass also
    // reads the rollout record once (one GET, none there: this fleet has no fleet/rollout.yaml), and incremental passes
    // then read nothing more for rollouts (the first test's idle pass).
    expect(bed.kube.countRequests({ method: "GET" })).to.equal(2 + 3 * (INVENTORY_TYPES.length + 2) + 2 * 3 + 1);
    expect(bed.kube.requests.filter((r) => r.path.includes("/configmaps/vc-rollout-"))).to.have.length(1);
    const records = bed.kube.requests.filter(
      (r) =>
        r.method === "GET" &&
        r.resource === "configmaps" &&
        r.path.startsWith("/api/v1/namespaces/vc-system/") &&
        !r.path.includes("/vc-rollout-"),
    );
    const recordSelectors = records.map((r) => decodeURIComponent(r.query).replace(/&limit=\d+$/, ""));
    expect(recordSelectors.filter((q) => q === `labelSelector=${RECORD_LABEL}=record`)).to.have.length(3);
    expect(
      recordSelectors.filter((q) => q.startsWith(`labelSelector=${RECORD_LABEL}=record,${LABELS.managedBy} in (`)),
    ).to.have.length(3);
    expect(
      recordSelectors.filter((q) => q.startsWith(`labelSelector=${RECORD_LABEL}=record,${HOST_NAMESPACE_LABEL} in (`)),
    ).to.have.length(3);
    expect(bed.kube.countRequests({ method: "PATCH" })).to.equal(3);
    const selectors = bed.kube.requests.filter((r) => r.method === "GET").map((r) => decodeURIComponent(r.query));
    expect(selectors.filter((q) => q.includes(`${LABELS.inventory} in (`))).to.have.length(3 * INVENTORY_TYPES.length);
  });
});
