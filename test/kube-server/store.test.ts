// The store and field-path helpers in isolation: resourceVersions, history, owner index, put semantics, fieldsV1 round
// trips.
import { expect } from "chai";
import fc from "fast-check";
import { decode, fieldPaths, fromFieldsV1, getAt, humanPath, toFieldsV1 } from "../support/kube-server/fieldpath.js";
import { startKubeServer } from "../support/kube-server/index.js";
import { Store } from "../support/kube-server/store.js";

const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
  ...extra,
});

describe("kube-server: store", () => {
  it("stamps increasing resourceVersions and replays history after a version", () => {
    const store = new Store(10);
    const a = store.commit("v1/ConfigMap", "ADDED", cm("a"));
    const b = store.commit("v1/ConfigMap", "MODIFIED", cm("a", { data: { k: "v" } }));
    expect(Number(b.obj.metadata.resourceVersion)).to.equal(Number(a.obj.metadata.resourceVersion) + 1);
    expect(store.eventsSince(1)!.map((e) => e.type)).to.deep.equal(["MODIFIED"]);
    expect(store.eventsSince(1)![0]!.old!.metadata.resourceVersion).to.equal("1");
    for (let i = 0; i < 20; i++) store.commit("v1/ConfigMap", "MODIFIED", cm("a"));
    expect(store.eventsSince(1)).to.equal(undefined);
    expect(store.eventsSince(Number(store.resourceVersion) - 5)).to.have.length(5);
  });

  it("indexes by kind and namespace and removes on DELETED", () => {
    const store = new Store();
    store.commit("v1/ConfigMap", "ADDED", cm("a"));
    store.commit("v1/ConfigMap", "ADDED", { ...cm("b"), metadata: { name: "b", namespace: "other" } });
    store.commit("v1/Secret", "ADDED", { ...cm("s"), kind: "Secret" });
    expect(store.count("v1/ConfigMap")).to.equal(2);
    expect(store.count("v1/ConfigMap", "ns")).to.equal(1);
    store.commit("v1/ConfigMap", "DELETED", cm("a"));
    expect(store.get("v1/ConfigMap", "ns", "a")).to.equal(undefined);
    expect(store.count("v1/ConfigMap")).to.equal(1);
  });

  it("tracks dependents by owner uid", () => {
    const store = new Store();
    store.commit("v1/ConfigMap", "ADDED", {
      ...cm("child"),
      metadata: {
        name: "child",
        namespace: "ns",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "o", uid: "u1" }],
      },
    });
    expect(store.dependents("u1")).to.deep.equal([["v1/ConfigMap", "ns", "child"]]);
    store.commit("v1/ConfigMap", "MODIFIED", cm("child"));
    expect(store.dependents("u1")).to.deep.equal([]);
  });

  it("put keeps uid and creationTimestamp on replace, hands out copies, and refuses unknown kinds", async () => {
    const server = await startKubeServer();
    try {
      const first = server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "1" } });
      expect(first.metadata.namespace).to.equal("default");
      const second = server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a", namespace: "default" },
        data: { k: "2" },
      });
      expect(second.metadata.uid).to.equal(first.metadata.uid);
      expect(second.metadata.creationTimestamp).to.equal(first.metadata.creationTimestamp);
      const copy = server.get("v1", "ConfigMap", "default", "a")!;
      (copy.data as Record<string, string>).k = "mutated";
      expect(server.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a" })!.data).to.deep.equal({
        k: "2",
      });
      expect(() => server.put({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } })).to.throw(
        /does not store example.com\/v1 Widget/,
      );
      expect(server.remove("v1", "ConfigMap", "default", "a")).to.equal(true);
      expect(server.remove("v1", "ConfigMap", "default", "a")).to.equal(false);
    } finally {
      await server.close();
    }
  });
});

describe("kube-server: field paths", () => {
  it("names keyed list items and renders upstream's readable paths", () => {
    const paths = [...fieldPaths({ spec: { containers: [{ name: "app", image: "x" }], replicas: 2 } })].map(decode);
    expect(paths).to.deep.include(["f:spec", "f:containers", 'k:{"name":"app"}', "f:image"]);
    expect(paths).to.deep.include(["f:spec", "f:containers", 'k:{"name":"app"}', "."]);
    expect(humanPath(["f:spec", "f:containers", 'k:{"name":"app"}', "f:image"])).to.equal(
      '.spec.containers[name="app"].image',
    );
    expect(
      getAt({ spec: { containers: [{ name: "app", image: "x" }] } }, [
        "f:spec",
        "f:containers",
        'k:{"name":"app"}',
        "f:image",
      ]),
    ).to.equal("x");
  });

  it("treats lists without merge keys as atomic", () => {
    expect([...fieldPaths({ args: ["a", "b"], tolerations: [{ key: "k" }] })].map(decode)).to.deep.equal([
      ["f:args"],
      ["f:tolerations"],
    ]);
  });

  it("round-trips any path set through fieldsV1", () => {
    const obj = fc.dictionary(
      fc.stringMatching(/^[a-z]{1,4}$/),
      fc.oneof(
        fc.string(),
        fc.integer(),
        fc.dictionary(fc.stringMatching(/^[a-z]{1,3}$/), fc.string(), { minKeys: 1, maxKeys: 3 }),
      ),
      { maxKeys: 5 },
    );
    fc.assert(
      fc.property(obj, (o) => {
        const set = fieldPaths(o as never);
        expect(fromFieldsV1(toFieldsV1(set))).to.deep.equal(new Set([...set].sort()));
      }),
    );
  });
});
