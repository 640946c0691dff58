import { expect } from "chai";
import { buildPlan } from "../../src/plan/build.js";
import { managedView } from "../../src/plan/normalize.js";
import { extractListKeys, listKeysOf } from "../../src/plan/list-keys.js";
import type { KubeObject } from "../../src/kube/object.js";
import { labelled } from "./fixtures.js";

const opts = { prune: true, allowMassPrune: false };

/** The StatefulSet vc renders (trimmed to what matters: keyed lists at several depths). */
function desiredSts(): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "p", namespace: "vc-p", labels: labelled("p") },
    spec: {
      replicas: 1,
      serviceName: "p-headless",
      template: {
        spec: {
          containers: [
            {
              name: "syncer",
              image: "vc:1",
              env: [{ name: "A", value: "1" }],
              ports: [{ name: "https", containerPort: 8443, protocol: "TCP" }],
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
          ],
          volumes: [{ name: "config", secret: { secretName: "c" } }],
        },
      },
    },
  };
}

/** vc's managedFields entry as kube-apiserver 1.20 writes it for desiredSts (keyed lists as `k:` elements). */
const VC_FIELDS = {
  "f:metadata": { "f:labels": { "f:vc.orch.io/inventory": {}, "f:vc.orch.io/managed-by": {} } },
  "f:spec": {
    "f:replicas": {},
    "f:serviceName": {},
    "f:template": {
      "f:spec": {
        "f:containers": {
          'k:{"name":"syncer"}': {
            ".": {},
            "f:name": {},
            "f:image": {},
            "f:env": { 'k:{"name":"A"}': { ".": {}, "f:name": {}, "f:value": {} } },
            "f:ports": {
              'k:{"containerPort":8443,"protocol":"TCP"}': {
                ".": {},
                "f:containerPort": {},
                "f:name": {},
                "f:protocol": {},
              },
            },
            "f:volumeMounts": { 'k:{"mountPath":"/data"}': { ".": {}, "f:mountPath": {}, "f:name": {} } },
          },
        },
        "f:volumes": { 'k:{"name":"config"}': { ".": {}, "f:name": {}, "f:secret": { "f:secretName": {} } } },
      },
    },
  },
};

/** The live object after vc's apply: defaults filled in, vc's managedFields, plus whatever `edit` does. */
function liveSts(edit: (spec: any, managed: any[]) => void = () => {}): KubeObject {
  const live = structuredClone(desiredSts()) as any;
  live.metadata.uid = "u1";
  live.metadata.managedFields = [
    { manager: "vc", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: structuredClone(VC_FIELDS) },
  ];
  const c = live.spec.template.spec.containers[0];
  c.terminationMessagePath = "/dev/termination-log";
  c.imagePullPolicy = "IfNotPresent";
  live.spec.template.spec.volumes[0].secret.defaultMode = 420;
  live.spec.podManagementPolicy = "OrderedReady";
  edit(live.spec, live.metadata.managedFields);
  return live;
}

const syncer = (spec: any) => spec.template.spec.containers[0];

function planOf(live: KubeObject, desired = desiredSts()) {
  return buildPlan("p", [desired], [live], opts).changes[0]!;
}

describe("plan/managed view: keyed lists and foreign fields", () => {
  it("reads the merge keys of containers, env, ports, mounts and volumes from the committed OpenAPI table", () => {
    const sts = listKeysOf("apps/v1", "StatefulSet") as any;
    const pod = sts.spec.template.spec;
    expect(pod.containers["="]).to.deep.equal(["name"]);
    expect(pod.containers.env["="]).to.deep.equal(["name"]);
    expect(pod.containers.ports["="]).to.deep.equal(["containerPort", "protocol"]);
    expect(pod.containers.volumeMounts["="]).to.deep.equal(["mountPath"]);
    expect(pod.volumes["="]).to.deep.equal(["name"]);
    expect(pod.imagePullSecrets["="]).to.deep.equal(["name"]);
    expect((listKeysOf("v1", "Service") as any).spec.ports["="]).to.deep.equal(["port", "protocol"]);
    // volumeClaimTemplates has no merge key: atomic, compared whole.
    expect(sts.spec.volumeClaimTemplates?.["="]).to.equal(undefined);
  });

  it(
    "builds the table from an OpenAPI document: list-map-keys first, else the patch merge key, " + "following $refs",
    () => {
      const doc = {
        definitions: {
          "x.Kind": {
            "x-kubernetes-group-version-kind": [{ group: "g", version: "v1", kind: "Kind" }],
            properties: { spec: { $ref: "#/definitions/x.Spec" } },
          },
          "x.Spec": {
            properties: {
              a: { type: "array", "x-kubernetes-patch-merge-key": "name", items: { $ref: "#/definitions/x.Item" } },
              b: {
                type: "array",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
                "x-kubernetes-patch-merge-key": "port",
                items: { type: "object" },
              },
              c: { type: "array", items: { type: "string" } },
            },
          },
          "x.Item": {
            properties: {
              inner: { type: "array", "x-kubernetes-patch-merge-key": "k", items: { type: "object" } },
              self: { $ref: "#/definitions/x.Item" },
            },
          },
        },
      };
      expect(extractListKeys(doc, ["g/v1/Kind"])).to.deep.equal({
        "g/v1/Kind": { spec: { a: { "=": ["name"], inner: { "=": ["k"] } }, b: { "=": ["port", "protocol"] } } },
      });
    },
  );

  it("finds no drift against the live object vc applied", () => {
    expect(planOf(liveSts()).action).to.equal("unchanged");
  });

  it("an env var another writer added (kubectl set env) is not drift", () => {
    const live = liveSts((spec, managed) => {
      syncer(spec).env.push({ name: "FOO", value: "bar" });
      managed.push({
        manager: "kubectl-set",
        operation: "Update",
        fieldsV1: {
          "f:spec": {
            "f:template": {
              "f:spec": {
                "f:containers": {
                  'k:{"name":"syncer"}': { "f:env": { 'k:{"name":"FOO"}': { ".": {}, "f:name": {}, "f:value": {} } } },
                },
              },
            },
          },
        },
      });
    });
    expect(planOf(live).action).to.equal("unchanged");
  });

  it("an env var placed before vc's is not drift either (items match by key, not position)", () => {
    const live = liveSts((spec) => syncer(spec).env.unshift({ name: "FOO", value: "bar" }));
    expect(planOf(live).action).to.equal("unchanged");
  });

  it("a container, a port, a mount and a volume another manager added are not drift", () => {
    const live = liveSts((spec) => {
      syncer(spec).ports.push({ containerPort: 9090, protocol: "TCP" });
      syncer(spec).volumeMounts.push({ name: "extra", mountPath: "/extra" });
      spec.template.spec.containers.unshift({
        name: "sidecar",
        image: "busybox",
        terminationMessagePath: "/dev/termination-log",
      });
      spec.template.spec.volumes.push({ name: "extra", emptyDir: {} });
    });
    expect(planOf(live).action).to.equal("unchanged");
  });

  it("a value of vc's env var changed by another writer is drift, shown on that item", () => {
    const live = liveSts((spec) => (syncer(spec).env[0].value = "2"));
    const change = planOf(live);
    expect(change.action).to.equal("update");
    expect(change.diff)
      .to.match(/^-\s+value: '2'$/m)
      .and.match(/^\+\s+value: '1'$/m);
  });

  it("an env var of vc's removed by another writer is drift, and a foreign one beside it still is not shown", () => {
    const live = liveSts((spec) => (syncer(spec).env = [{ name: "FOO", value: "bar" }]));
    const change = planOf(live);
    expect(change.action).to.equal("update");
    expect(change.diff)
      .to.match(/^\+\s+- name: A$/m)
      .and.not.include("FOO");
  });

  it("vc's container removed by another writer is drift", () => {
    const live = liveSts((spec) => (spec.template.spec.containers = [{ name: "sidecar", image: "busybox" }]));
    const change = planOf(live);
    expect(change.action).to.equal("update");
    expect(change.diff)
      .to.match(/^\+\s+- env:$/m)
      .and.not.include("sidecar");
  });

  it("an item vc applied and no longer renders is shown as a removal (vc's field manager owns it)", () => {
    const live = liveSts((spec, managed) => {
      syncer(spec).env.push({ name: "OLD", value: "x" });
      managed[0].fieldsV1["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"syncer"}']["f:env"][
        'k:{"name":"OLD"}'
      ] = { ".": {}, "f:name": {}, "f:value": {} };
    });
    const change = planOf(live);
    expect(change.action).to.equal("update");
    expect(change.diff).to.match(/^-\s+- name: OLD$/m);
  });

  it("a key field the server defaulted (a port's protocol) is not a removal when vc left it out", () => {
    const desired = desiredSts() as any;
    delete syncer(desired.spec).ports[0].protocol;
    expect(planOf(liveSts(), desired).action).to.equal("unchanged");
  });

  it("the fields another writer adds inside vc's container (a foreign resources limit) are not drift", () => {
    const live = liveSts((spec) => (syncer(spec).resources = { limits: { cpu: "1" } }));
    expect(planOf(live).action).to.equal("unchanged");
  });

  it("an annotation another writer adds is not drift", () => {
    const live = liveSts();
    live.metadata.annotations = { "example.com/x": "y" };
    expect(planOf(live).action).to.equal("unchanged");
  });

  it("a list without merge key (args) stays atomic: an extra item is drift", () => {
    const desired = desiredSts() as any;
    syncer(desired.spec).args = ["--a"];
    const live = liveSts((spec) => (syncer(spec).args = ["--a", "--b"]));
    const change = planOf(live, desired);
    expect(change.action).to.equal("update");
    expect(change.diff).to.match(/^-\s+- --b$/m);
  });

  it("managedView shows vc's items in desired order whatever the live order", () => {
    const desired = desiredSts() as any;
    syncer(desired.spec).env = [
      { name: "A", value: "1" },
      { name: "B", value: "2" },
    ];
    const live = liveSts(
      (spec) =>
        (syncer(spec).env = [
          { name: "B", value: "2" },
          { name: "X", value: "x" },
          { name: "A", value: "1" },
        ]),
    );
    const view = managedView(live, desired) as any;
    expect(syncer(view.spec).env).to.deep.equal([
      { name: "A", value: "1" },
      { name: "B", value: "2" },
    ]);
  });
});
