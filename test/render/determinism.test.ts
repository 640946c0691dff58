import { expect } from "chai";
import fc from "fast-check";
import { dump } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { findCollisions } from "../../src/render/collisions.js";
import { RenderCollisionError, renderCluster, renderObjects } from "../../src/render/index.js";
import { renderSpecs } from "../../src/render/fleet.js";
import { compareRefs, stageOf } from "../../src/kube/order.js";
import { refOf } from "../../src/kube/object.js";
import type { MeshManifest } from "../../src/model/cluster.js";
import { makeSpec, meshDoc, withMesh } from "./fixtures.js";

const API = "networking.mesh.io/v1beta1";
const C = "team-a";

function meshSet(): MeshManifest[] {
  const docs: MeshManifest[] = [];
  for (const ns of ["shop", "edge"]) {
    for (const svc of ["reviews", "ratings", "details"]) {
      docs.push(
        meshDoc(
          C,
          `${ns}/${svc}.yaml`,
          {
            apiVersion: API,
            kind: "VirtualService",
            metadata: { name: svc, namespace: ns },
            spec: { http: [{ route: [{ destination: { host: svc }, weight: 100 }] }], hosts: [svc] },
          },
          0,
        ),
      );
      docs.push(
        meshDoc(
          C,
          `${ns}/${svc}.yaml`,
          {
            apiVersion: API,
            kind: "DestinationRule",
            metadata: { namespace: ns, name: svc },
            spec: { subsets: [{ labels: { version: "v1" }, name: "v1" }], host: svc },
          },
          1,
        ),
      );
    }
    docs.push(
      meshDoc(C, `${ns}/gw.yaml`, {
        apiVersion: API,
        kind: "Gateway",
        metadata: { name: "gw", namespace: ns },
        spec: { selector: { istio: "ingress" }, servers: [] },
      }),
    );
  }
  return docs;
}

function full(mesh: MeshManifest[]) {
  return makeSpec(
    C,
    (v) => {
      withMesh(v);
      v.integrations.metricsServer.enabled = true;
      v.policies.resourceQuota = { enabled: true, quota: { "limits.memory": "16Gi", "limits.cpu": "8" } };
      v.sync.toHost.customResources = {
        "widgets.example.com": { enabled: true },
        "certificates.cert-manager.io": { enabled: true },
      };
    },
    mesh,
  );
}

const bytes = (objs: KubeObject[]) => objs.map((o) => dump(o, { lineWidth: -1 })).join("---\n");

function keysSorted(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(keysSorted);
  if (typeof v !== "object" || v === null) return true;
  const keys = Object.keys(v);
  return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(v).every(keysSorted);
}

describe("render/determinism", () => {
  it("renders the same input twice to identical bytes", () => {
    expect(bytes(renderCluster(full(meshSet()), "abc"))).to.equal(bytes(renderCluster(full(meshSet()), "abc")));
  });

  it("renders shuffled mesh input to the same output", () => {
    const expected = bytes(renderCluster(full(meshSet()), "abc"));
    fc.assert(
      fc.property(fc.shuffledSubarray(meshSet(), { minLength: 14, maxLength: 14 }), (shuffled) => {
        expect(bytes(renderCluster(full(shuffled), "abc"))).to.equal(expected);
      }),
      { numRuns: 30 },
    );
  });

  it("orders objects in apply order (kinds, then namespace and name), with every object's keys sorted", () => {
    const objs = renderCluster(full(meshSet()), "abc");
    expect(
      objs.every((o) => stageOf(o) < 6),
      "every rendered kind has a place in the apply order",
    ).to.equal(true);
    for (let i = 1; i < objs.length; i++) {
      const a = refOf(objs[i - 1]!);
      const b = refOf(objs[i]!);
      expect(compareRefs(a, b) < 0, `${JSON.stringify(a)} before ${JSON.stringify(b)}`).to.equal(true);
    }
    expect(objs.every(keysSorted)).to.equal(true);
  });

  it("changes only the revision annotations when the revision changes", () => {
    const a = bytes(renderCluster(full(meshSet()), "aaaa111"));
    const b = bytes(renderCluster(full(meshSet()), "bbbb222"));
    expect(a).to.not.equal(b);
    expect(a.replaceAll("aaaa111", "X")).to.equal(b.replaceAll("bbbb222", "X"));
  });

  it("renders no collision for distinct names", () => {
    expect(findCollisions(renderCluster(full(meshSet()), "abc"))).to.deep.equal([]);
  });

  const docs = [
    meshDoc(C, "a.yaml", {
      apiVersion: API,
      kind: "VirtualService",
      metadata: { name: "a-x-b", namespace: "c" },
      spec: {},
    }),
    meshDoc(C, "b.yaml", {
      apiVersion: API,
      kind: "VirtualService",
      metadata: { name: "a", namespace: "b-x-c" },
      spec: {},
    }),
  ];

  it("reports mesh objects whose names translate alike", () => {
    const diags = findCollisions(renderObjects(makeSpec(C, withMesh, docs), "abc"));
    expect(diags).to.have.length(1);
    expect(diags[0]!.severity).to.equal("error");
    expect(diags[0]!.code).to.equal("host-name-collision");
    expect(diags[0]!.message).to.include("a-x-b-x-c-x-team-a");
    expect(diags[0]!.message).to.include("clusters/team-a/mesh/a.yaml");
    expect(diags[0]!.message).to.include("clusters/team-a/mesh/b.yaml");
  });

  it("refuses to render such a cluster through renderCluster, and reports it through renderSpecs", () => {
    const spec = makeSpec(C, withMesh, docs);
    expect(() => renderCluster(spec, "abc")).to.throw(RenderCollisionError, "a-x-b-x-c-x-team-a");
    const fleet = renderSpecs([spec, makeSpec("other")], "abc");
    expect(fleet.clusters.map((c) => c.spec.name)).to.deep.equal(["other"]);
    expect(fleet.diagnostics).to.have.length(1);
  });
});
