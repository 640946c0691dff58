import { expect } from "chai";
import fc from "fast-check";
import { buildPlan, PlanError } from "../../src/plan/build.js";
import { compareRefs } from "../../src/kube/order.js";
import { ANNOTATIONS, LABELS } from "../../src/translate/keys.js";
import type { KubeObject } from "../../src/kube/object.js";
import { asLive, clusterObjects } from "./fixtures.js";

const opts = { prune: true, allowMassPrune: false };

describe("plan/build", () => {
  it("creates everything when nothing is live, in apply order", () => {
    const plan = buildPlan("a", clusterObjects("a"), [], opts);
    expect(plan.counts).to.deep.equal({ create: 6, update: 0, delete: 0, unchanged: 0 });
    expect(plan.changes.map((c) => c.ref.kind)).to.deep.equal([
      "Namespace",
      "ServiceAccount",
      "Secret",
      "ConfigMap",
      "StatefulSet",
      "VirtualService",
    ]);
    expect(plan.changes[0]!.diff).to.match(/^--- \/dev\/null\n\+\+\+ desired\/Namespace vc-a\n/);
  });

  it("finds no change against live objects with server fields, defaults and status", () => {
    const desired = clusterObjects("a");
    const plan = buildPlan(
      "a",
      desired,
      desired.map((o) => asLive(o)),
      opts,
    );
    expect(plan.counts).to.deep.equal({ create: 0, update: 0, delete: 0, unchanged: 6 });
    expect(plan.changes.every((c) => !c.diff)).to.equal(true);
  });

  it("shows drift made by another writer as an update with a diff of that field", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    const cm = live.find((o) => o.kind === "ConfigMap")!;
    cm.data = { a: "changed-by-hand" };
    const plan = buildPlan("a", desired, live, opts);
    const change = plan.changes.find((c) => c.ref.kind === "ConfigMap")!;
    expect(change.action).to.equal("update");
    expect(change.diff).to.include("-  a: changed-by-hand").and.include("+  a: '1'");
    expect(plan.counts.update).to.equal(1);
  });

  it("shows a field vc owned and no longer renders as a removal", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    const next = structuredClone(desired);
    const cm = next.find((o) => o.kind === "ConfigMap")!;
    cm.metadata.labels = { ...cm.metadata.labels, extra: "x" };
    const liveWithExtra = live.map((o) => (o.kind === "ConfigMap" ? asLive(cm) : o));
    const plan = buildPlan("a", desired, liveWithExtra, opts);
    const change = plan.changes.find((c) => c.ref.kind === "ConfigMap")!;
    expect(change.action).to.equal("update");
    expect(change.diff).to.include("-    extra: x");
  });

  it("ignores labels other writers add, outside what vc manages", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    live[0]!.metadata.labels = { ...live[0]!.metadata.labels, "other.io/x": "y" };
    expect(buildPlan("a", desired, live, opts).counts.update).to.equal(0);
  });

  it("treats a change of the revision annotation alone as unchanged, unless asked not to", () => {
    const live = clusterObjects("a", "rev1").map((o) => asLive(o));
    expect(buildPlan("a", clusterObjects("a", "rev2"), live, opts).counts.unchanged).to.equal(6);
    expect(
      buildPlan("a", clusterObjects("a", "rev2"), live, { ...opts, ignoreRevisionOnly: false }).counts.update,
    ).to.equal(6);
    const changed = clusterObjects("a", "rev2");
    changed.find((o) => o.kind === "ConfigMap")!.data = { a: "2" };
    const change = buildPlan("a", changed, live, opts).changes.find((c) => c.action === "update")!;
    expect(change.diff).to.include(`+    ${ANNOTATIONS.revision}: rev2`);
  });

  it("prunes only inventory objects of the cluster, deletes in reverse order, and only with prune", () => {
    const desired = clusterObjects("a").filter((o) => o.kind !== "VirtualService" && o.kind !== "ConfigMap");
    const live = clusterObjects("a").map((o) => asLive(o));
    const foreign: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a-status", namespace: "vc-a", labels: { app: "x" } },
    };
    const other = asLive({
      ...clusterObjects("b")[4]!,
      metadata: { ...clusterObjects("b")[4]!.metadata, namespace: "vc-a" },
    });
    const plan = buildPlan("a", desired, [...live, foreign, other], opts);
    expect(plan.changes.filter((c) => c.action === "delete").map((c) => c.ref.kind)).to.deep.equal([
      "VirtualService",
      "ConfigMap",
    ]);
    expect(plan.changes.at(-1)!.ref.name).to.equal("a-config");
    expect(plan.blocked).to.equal(undefined);
    expect(buildPlan("a", desired, live, { ...opts, prune: false }).counts.delete).to.equal(0);
  });

  it("blocks a prune of more than half, or all, of the objects unless allowed", () => {
    const live = clusterObjects("a").map((o) => asLive(o));
    const few = clusterObjects("a").slice(0, 2);
    const plan = buildPlan("a", few, live, opts);
    expect(plan.counts.delete).to.equal(3); // and the Namespace, kept
    expect(plan.retained!.map((r) => r.ref.kind)).to.deep.equal(["Namespace"]);
    expect(plan.blocked)
      .to.match(/prune guard: cluster a would delete 4 of 6/)
      .and.match(/--allow-mass-prune/);
    expect(buildPlan("a", [], live, opts).blocked).to.match(/delete all 6/);
    expect(buildPlan("a", few, live, { ...opts, allowMassPrune: true }).blocked).to.equal(undefined);
    expect(buildPlan("a", clusterObjects("a").slice(0, 3), live, opts).blocked).to.equal(undefined);
  });

  it(
    "a cluster pruned down to its kept Namespace no longer trips the guard; a Namespace with anything else left " +
      "still does",
    () => {
      const live = clusterObjects("a").map((o) => asLive(o));
      const onlyNamespace = live.filter((o) => o.kind === "Namespace");
      const plan = buildPlan("a", [], onlyNamespace, opts);
      expect(plan.blocked).to.equal(undefined);
      expect(plan.counts).to.deep.equal({ create: 0, update: 0, delete: 0, unchanged: 0 });
      expect(plan.retained!.map((r) => r.ref.name)).to.deep.equal(["vc-a"]);
      const withOne = [...onlyNamespace, live.find((o) => o.kind === "ConfigMap")!];
      expect(buildPlan("a", [], withOne, opts).blocked).to.match(/prune guard: cluster a would delete all 2/);
    },
  );

  it("never prunes a namespace: it is kept and reported, even with --allow-mass-prune", () => {
    const live = clusterObjects("a").map((o) => asLive(o));
    const plan = buildPlan("a", [], live, { prune: true, allowMassPrune: true });
    expect(plan.blocked).to.equal(undefined);
    expect(plan.changes.map((c) => c.ref.kind)).to.not.include("Namespace");
    expect(plan.counts.delete).to.equal(5);
    expect(plan.retained).to.have.length(1);
    expect(plan.retained![0]!.ref).to.deep.include({ kind: "Namespace", name: "vc-a" });
    expect(plan.retained![0]!.reason).to.match(/never pruned.*volume claims/);
  });

  it("refuses an object without the cluster's inventory label, and duplicates", () => {
    const objs = clusterObjects("a");
    delete objs[0]!.metadata.labels![LABELS.inventory];
    expect(() => buildPlan("a", objs, [], opts)).to.throw(PlanError, /lacks the label vc.orch.io\/inventory=a/);
    const dup = clusterObjects("a");
    expect(() => buildPlan("a", [...dup, dup[0]!], [], opts)).to.throw(PlanError, /rendered twice/);
  });

  it("sees a list that grew or shrank as an update", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    const sts = structuredClone(desired);
    (sts[0]!.spec as any).template.spec.containers[0].env.push({ name: "B", value: "2" });
    const change = buildPlan("a", sts, live, opts).changes.find((c) => c.ref.kind === "StatefulSet")!;
    expect(change.action).to.equal("update");
    expect(change.diff).to.include("+            - name: B");
  });

  it("orders applies exactly as compareRefs and deletes exactly in reverse, whatever the input order", () => {
    const all = [
      ...clusterObjects("a"),
      ...clusterObjects("a").map((o) => ({
        ...o,
        metadata: { ...o.metadata, name: `${o.metadata.name}-2`, namespace: o.metadata.namespace && "vc-b" },
      })),
    ];
    fc.assert(
      fc.property(fc.shuffledSubarray(all), fc.shuffledSubarray(all), (desired, gone) => {
        const keep = desired;
        const liveOnly = gone.filter((g) => !keep.includes(g)).map((o) => asLive(o));
        const plan = buildPlan("a", keep, liveOnly, { prune: true, allowMassPrune: true });
        const applies = plan.changes.filter((c) => c.action !== "delete").map((c) => c.ref);
        const deletes = plan.changes.filter((c) => c.action === "delete").map((c) => c.ref);
        expect(applies).to.deep.equal([...applies].sort(compareRefs));
        expect(deletes).to.deep.equal([...deletes].sort(compareRefs).reverse());
      }),
    );
  });

  it("treats empty maps, empty lists and nulls in the desired object as absent", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    const withEmpties = structuredClone(desired);
    const cm = withEmpties.find((o) => o.kind === "ConfigMap")!;
    cm.binaryData = {};
    cm.immutable = null;
    (withEmpties[0]!.spec as any).selector = { matchLabels: {} };
    (withEmpties[0]!.spec as any).template.spec.volumes = [];
    expect(buildPlan("a", withEmpties, live, opts).counts.unchanged).to.equal(6);
    cm.binaryData = { x: "eA==" };
    expect(buildPlan("a", withEmpties, live, opts).counts.update).to.equal(1);
  });
});
