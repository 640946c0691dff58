import { expect } from "chai";
import { buildPlan } from "../../src/plan/build.js";
import { immutableChanges } from "../../src/plan/immutable.js";
import type { KubeObject } from "../../src/kube/object.js";
import { labelled } from "./fixtures.js";

const opts = { prune: true, allowMassPrune: false };

function sts(edit: (spec: any) => void = () => {}): KubeObject {
  const spec: any = {
    replicas: 1,
    serviceName: "p-headless",
    selector: { matchLabels: { app: "vc" } },
    template: { metadata: { labels: { app: "vc" } }, spec: { containers: [{ name: "syncer", image: "vc:1" }] } },
    volumeClaimTemplates: [
      {
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
      },
    ],
  };
  edit(spec);
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "p", namespace: "vc-p", labels: labelled("p") },
    spec,
  };
}

/** The live twin as the server keeps it: vc owns what it applied (fieldsV1 of every top-level spec field). */
function live(obj: KubeObject, extra: Record<string, unknown> = {}): KubeObject {
  const l = structuredClone(obj) as any;
  l.metadata.uid = "u1";
  l.metadata.managedFields = [
    {
      manager: "vc",
      operation: "Apply",
      fieldsV1: { "f:spec": Object.fromEntries(Object.keys(l.spec ?? {}).map((k) => [`f:${k}`, {}])) },
    },
  ];
  Object.assign(l, extra);
  return l;
}

describe("plan/immutable: changes the API server refuses in place", () => {
  it(
    "StatefulSet: volumeClaimTemplates, serviceName, selector and podManagementPolicy are refused; replicas, " +
      "template and updateStrategy are not",
    () => {
      const base = sts();
      const check = (edit: (s: any) => void) => immutableChanges(sts(edit), live(base), live(base));
      expect(check((s) => (s.volumeClaimTemplates[0].spec.resources.requests.storage = "20Gi"))).to.deep.equal([
        "spec.volumeClaimTemplates",
      ]);
      expect(check((s) => (s.serviceName = "other"))).to.deep.equal(["spec.serviceName"]);
      expect(check((s) => (s.selector = { matchLabels: { app: "x" } }))).to.deep.equal(["spec.selector"]);
      expect(check((s) => (s.podManagementPolicy = "Parallel"))).to.deep.equal(["spec.podManagementPolicy"]);
      expect(
        check(
          (s) => (
            (s.replicas = 3), (s.template.spec.containers[0].image = "vc:2"), (s.updateStrategy = { type: "OnDelete" })
          ),
        ),
      ).to.deep.equal([]);
    },
  );

  it("Deployment selector, Service clusterIP, RoleBinding roleRef are refused", () => {
    const dep = (app: string): KubeObject => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "n" },
      spec: { selector: { matchLabels: { app } }, replicas: 1 },
    });
    expect(immutableChanges(dep("b"), dep("a"), dep("a"))).to.deep.equal(["spec.selector"]);
    const svc = (ip: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "s", namespace: "n" },
      spec: { clusterIP: ip },
    });
    expect(immutableChanges(svc("10.0.0.2"), svc("10.0.0.1"), svc("10.0.0.1"))).to.deep.equal(["spec.clusterIP"]);
    const rb = (role: string): KubeObject => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "r", namespace: "n" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
    });
    expect(immutableChanges(rb("b"), rb("a"), rb("a"))).to.deep.equal(["roleRef"]);
  });

  it("a Secret or ConfigMap marked immutable on the host keeps its data; one that is not may change", () => {
    const cm = (v: string, immutable?: boolean): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "n" },
      data: { a: v },
      ...(immutable ? { immutable } : {}),
    });
    expect(immutableChanges(cm("2", true), cm("1", true), cm("1", true))).to.deep.equal([
      "data (the object is marked immutable)",
    ]);
    expect(immutableChanges(cm("2"), cm("1"), cm("1"))).to.deep.equal([]);
    expect(immutableChanges(cm("1"), cm("1"), cm("1", true))).to.deep.equal(["immutable"]);
  });

  it(
    "blocks the whole cluster's plan naming the object and field, unless forced, which marks it for " + "recreation",
    () => {
      const cm: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "c", namespace: "vc-p", labels: labelled("p") },
        data: { a: "2" },
      };
      const bigger = sts((s) => (s.volumeClaimTemplates[0].spec.resources.requests.storage = "20Gi"));
      const liveObjs = [live(sts()), live({ ...cm, data: { a: "1" } })];
      const plan = buildPlan("p", [bigger, cm], liveObjs, opts);
      expect(plan.counts.update).to.equal(2);
      expect(plan.blocked).to.match(
        /^cannot update in place: the API server refuses changes of immutable fields of StatefulSet vc-p\/p \(spec.volumeClaimTemplates\); vc applies nothing of cluster p/,
      );
      expect(plan.blocked)
        .to.include("vc apply --force")
        .and.include("propagationPolicy=Orphan")
        .and.include("force: true in clusters/p/cluster.yaml");
      const change = plan.changes.find((c) => c.ref.kind === "StatefulSet")!;
      expect(change.immutable).to.deep.equal(["spec.volumeClaimTemplates"]);
      expect(change.recreate).to.equal(undefined);
      const forced = buildPlan("p", [bigger, cm], liveObjs, { ...opts, force: true });
      expect(forced.blocked).to.equal(undefined);
      expect(forced.changes.find((c) => c.ref.kind === "StatefulSet")!.recreate).to.equal(true);
    },
  );

  it("a quantity the server canonicalised in a claim template is not a change", () => {
    const l = live(sts((s) => (s.volumeClaimTemplates[0].spec.resources.requests.storage = "10240Mi")));
    const plan = buildPlan("p", [sts()], [l], opts);
    expect(plan.counts.unchanged).to.equal(1);
    expect(plan.blocked).to.equal(undefined);
  });
});
