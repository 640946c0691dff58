import { expect } from "chai";
import fc from "fast-check";
import { compareRefs, compareRefsForDelete, stageOf } from "../../src/kube/order.js";
import type { ObjectRef } from "../../src/kube/object.js";

const kinds: Array<[string, string]> = [
  ["networking.mesh.io/v1beta1", "VirtualService"],
  ["cert-manager.io/v1", "Certificate"],
  ["apps/v1", "StatefulSet"],
  ["v1", "Service"],
  ["v1", "ConfigMap"],
  ["v1", "Secret"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
  ["rbac.authorization.k8s.io/v1", "Role"],
  ["v1", "ServiceAccount"],
  ["v1", "Namespace"],
  ["example.io/v1", "Widget"],
];

describe("plan/order", () => {
  it(
    "orders namespaces, accounts and roles, role bindings (a stage after their roles), secrets and config, " +
      "services, workloads and certificates, mesh, then unknown kinds",
    () => {
      const refs: ObjectRef[] = kinds.map(([apiVersion, kind]) => ({
        apiVersion,
        kind,
        name: "x",
        namespace: kind === "Namespace" ? undefined : "ns",
      }));
      const sorted = [...refs].sort(compareRefs).map((r) => r.kind);
      expect(sorted).to.deep.equal([
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Secret",
        "ConfigMap",
        "Service",
        "StatefulSet",
        "Certificate",
        "VirtualService",
        "Widget",
      ]);
      expect(sorted.map((k) => stageOf(refs.find((r) => r.kind === k)!))).to.deep.equal([
        0, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6,
      ]);
    },
  );

  it("is a total, deterministic order and deletes go in exactly the reverse", () => {
    const ref = fc.record({
      kindIdx: fc.nat(kinds.length - 1),
      namespace: fc.constantFrom("a", "b"),
      name: fc.string({ minLength: 1, maxLength: 4 }),
    });
    fc.assert(
      fc.property(fc.array(ref, { maxLength: 30 }), (raw) => {
        const refs: ObjectRef[] = raw.map((r) => ({
          apiVersion: kinds[r.kindIdx]![0],
          kind: kinds[r.kindIdx]![1],
          namespace: r.namespace,
          name: r.name,
        }));
        const a = [...refs].sort(compareRefs);
        const b = [...refs].reverse().sort(compareRefs);
        expect(a).to.deep.equal(b);
        expect([...refs].sort(compareRefsForDelete)).to.deep.equal([...a].reverse());
      }),
    );
  });
});
