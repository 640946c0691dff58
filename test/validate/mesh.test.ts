import { expect } from "chai";
import { loadAndValidate } from "../../src/validate/index.js";
import { cleanupRepos, makeRepo, MESH_ON, VS } from "./fixture.js";

async function check(files: Record<string, string>) {
  const r = await loadAndValidate(makeRepo(files));
  return r.diagnostics.map((d) => [d.file.replace("clusters/a/", ""), d.line, d.col, d.severity, d.code, d.message]);
}

describe("validate/mesh", () => {
  after(cleanupRepos);

  it("accepts a valid VirtualService and defaults its namespace to default", async () => {
    const r = await loadAndValidate(
      makeRepo({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/vs.yaml": VS("reviews") }),
    );
    expect(r.diagnostics).to.deep.equal([]);
    const m = r.clusters[0]!.spec!.mesh;
    expect(m).to.have.length(1);
    expect(m[0]!.object.metadata.namespace).to.equal("default");
    expect(m[0]).to.include({ file: "clusters/a/mesh/vs.yaml", index: 0 });
  });

  it("keeps fields the spec does not show, as warnings at their key", async () => {
    const vs = `${VS("reviews", "shop")}  tcp:\n    - route: []\n`;
    const text = vs.replace("http:\n", "http:\n").replace("    - route:\n", "    - timeout: 5s\n      route:\n");
    const r = await loadAndValidate(makeRepo({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/vs.yaml": text }));
    expect(r.diagnostics.map((d) => [d.line, d.severity, d.message])).to.deep.equal([
      [
        10,
        "warning",
        'field "timeout" in spec.http[0] is not in the checked shape of VirtualService: kept as written, not validated',
      ],
      [
        14,
        "warning",
        'field "tcp" in spec is not in the checked shape of VirtualService: kept as written, not validated',
      ],
    ]);
    expect(r.clusters[0]!.spec!.mesh[0]!.object.spec).to.have.property("tcp");
  });

  it("checks types, enums, durations and ports of every kind", async () => {
    const dr = `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: reviews
spec:
  host: reviews
  trafficPolicy:
    loadBalancer:
      simple: LEAST_REQUESTS
    outlierDetection:
      interval: 30 seconds
    tls:
      mode: ISTIO_MUTUAL
`;
    const gw = `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: gw
spec:
  selector:
    istio: ingressgateway
  servers:
    - port:
        number: "80"
        name: http
        protocol: HTTP
      hosts: [a.example.com]
`;
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/dr.yaml": dr,
      "clusters/a/mesh/gw.yaml": gw,
    });
    expect(d).to.deep.equal([
      [
        "mesh/dr.yaml",
        9,
        7,
        "error",
        "schema",
        'invalid value "LEAST_REQUESTS" at spec.trafficPolicy.loadBalancer.simple: did you mean "LEAST_REQUEST"? use one of UNSPECIFIED, RANDOM, PASSTHROUGH, ROUND_ROBIN, LEAST_REQUEST, LEAST_CONN',
      ],
      [
        "mesh/dr.yaml",
        11,
        7,
        "error",
        "schema",
        'invalid duration "30 seconds" at spec.trafficPolicy.outlierDetection.interval: use forms like 100ms, 5s, 1m30s',
      ],
      ["mesh/gw.yaml", 10, 9, "error", "schema", 'spec.servers[0].port.number must be an integer, got string "80"'],
    ]);
  });

  it("rejects other kinds, other apiVersions and documents that are not mappings", async () => {
    const text = `apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata: {name: a}
spec: {hosts: [a]}
---
apiVersion: v1
kind: Service
metadata: {name: a}
---
- just
- a list
`;
    const d = await check({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/x.yaml": text });
    expect(d.map((x) => [x[1], x[4]])).to.deep.equal([
      [1, "mesh-kind"],
      [7, "mesh-kind"],
      [10, "not-a-mapping"],
    ]);
    expect(d[0]![5]).to.contain("networking.mesh.io/v1beta1");
  });

  it("reports the same kind/namespace/name twice at both places", async () => {
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/one.yaml": VS("reviews", "shop"),
      "clusters/a/mesh/two.yaml": `${VS("other")}---\n${VS("reviews", "shop")}`,
    });
    expect(d.map((x) => [x[0], x[1], x[4]])).to.deep.equal([
      ["mesh/one.yaml", 4, "duplicate"],
      ["mesh/two.yaml", 16, "duplicate"],
    ]);
    expect(d[0]![5]).to.equal(
      "VirtualService shop/reviews is defined twice (also at clusters/a/mesh/two.yaml, document 2)",
    );
  });

  it("reports two objects whose host names collide", async () => {
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/x.yaml": `${VS("a-x-b", "c")}---\n${VS("a", "b-x-c")}`,
    });
    expect(d.map((x) => [x[1], x[4]])).to.deep.equal([
      [4, "host-name-collision"],
      [17, "host-name-collision"],
    ]);
    expect(d[0]![5]).to.contain('both become "a-x-b-x-c-x-a" on the host');
  });

  it("warns that manifests are never applied while the integration or their kind's switch is off", async () => {
    const off = await check({ "clusters/a/values.yaml": "{}\n", "clusters/a/mesh/vs.yaml": VS("reviews") });
    expect(off.map((x) => [x[1], x[3], x[4]])).to.deep.equal([[2, "warning", "mesh-disabled"]]);
    expect(off[0]![5]).to.contain("the mesh integration is off");
    const kindOff = await check({
      "clusters/a/values.yaml":
        `${MESH_ON}    sync:\n      toHost:\n        virtualServices:\n          enabled: ` + `false\n`,
      "clusters/a/mesh/vs.yaml": VS("reviews"),
    });
    expect(kindOff.map((x) => x[5])).to.deep.equal([
      "VirtualService default/reviews is never applied: integrations.mesh.sync.toHost.virtualServices.enabled is false",
    ]);
  });

  it("checks names, HTTPS servers without tls, and references to gateways and subsets", async () => {
    const gw = `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata: {name: Public_GW}
spec:
  selector: {istio: ingressgateway}
  servers:
    - port: {number: 443, name: https, protocol: HTTPS}
      hosts: [a.example.com]
`;
    const vs = VS("reviews", undefined, "            subset: v9\n").replace(
      "spec:\n",
      "spec:\n  gateways: [missing]\n",
    );
    const d = await check({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/gw.yaml": gw });
    expect(d.map((x) => [x[0], x[1], x[3], x[4]])).to.deep.equal([
      ["mesh/gw.yaml", 3, "error", "schema"],
      ["mesh/gw.yaml", 7, "error", "mesh-rule"],
    ]);
    expect(d[0]![5]).to.contain("DNS-1123 subdomain");
    const refs = await check({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/vs.yaml": vs });
    expect(refs.map((x) => [x[0], x[1], x[3], x[4], x[5]])).to.deep.equal([
      [
        "mesh/vs.yaml",
        6,
        "warning",
        "dangling-reference",
        'gateway "missing" is not defined in this cluster\'s mesh manifests (Gateway default/missing)',
      ],
      [
        "mesh/vs.yaml",
        13,
        "warning",
        "dangling-reference",
        'subset "v9": no DestinationRule in this cluster defines subsets for reviews.default',
      ],
    ]);
  });

  it("checks what a schema cannot: one load balancer, unique subsets, weights adding up to 100", async () => {
    const dr = `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata: {name: reviews}
spec:
  host: reviews
  trafficPolicy:
    loadBalancer:
      simple: RANDOM
      consistentHash: {httpHeaderName: x-user}
  subsets:
    - {name: v1, labels: {version: v1}}
    - {name: v1, labels: {version: v2}}
`;
    const vs = VS("ratings").replace(
      "    - route:\n        - destination:\n            host: ratings\n",
      "    - route:\n        - destination: {host: ratings}\n          weight: 70\n        - destination: {host: " +
        "ratings}\n          weight: 20\n",
    );
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/dr.yaml": dr,
      "clusters/a/mesh/vs.yaml": vs,
    });
    expect(d.map((x) => [x[0], x[1], x[3], x[5]])).to.deep.equal([
      ["mesh/dr.yaml", 7, "error", "set either loadBalancer.simple or loadBalancer.consistentHash, not both"],
      ["mesh/dr.yaml", 12, "error", 'subset "v1" is defined twice'],
      ["mesh/vs.yaml", 9, "warning", "route weights add up to 90, not 100"],
    ]);
  });

  it("does not report references to a document that was rejected", async () => {
    const dr =
      "apiVersion: networking.mesh.io/v1beta1\nkind: DestinationRule\nmetadata: {name: reviews}\nspec:\n  host: " +
      "reviews\n  subsets: [{name: v9, labels: {version: v9}}]\n  bogus: {trafficPolicy: 1}\n  trafficPolicy: " +
      "{tls: {mode: NOPE}}\n";
    const vs = VS("reviews", undefined, "            subset: v9\n");
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/dr.yaml": dr,
      "clusters/a/mesh/vs.yaml": vs,
    });
    expect(d.map((x) => [x[0], x[4]])).to.deep.equal([
      ["mesh/dr.yaml", "schema"],
      ["mesh/dr.yaml", "schema"],
    ]);
  });

  it("checks label keys and values and gateway references", async () => {
    const gw = `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: gw
  labels: {"-bad": x}
spec:
  selector: {istio: "ingress gateway"}
  servers:
    - port: {number: 80, name: http, protocol: HTTP}
      hosts: [a.example.com]
`;
    const vs = VS("reviews").replace("spec:\n", "spec:\n  gateways: [mesh, shop/public, Public]\n");
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/gw.yaml": gw,
      "clusters/a/mesh/vs.yaml": vs,
    });
    expect(d.map((x) => [x[0], x[1], x[5]])).to.deep.equal([
      [
        "mesh/gw.yaml",
        5,
        'invalid label key "-bad" in metadata.labels: use [prefix/]name, the name at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
      ],
      [
        "mesh/gw.yaml",
        7,
        'invalid label value "ingress gateway" at spec.selector.istio: at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit',
      ],
      ["mesh/vs.yaml", 6, 'invalid gateway "Public" at spec.gateways[2]: use mesh, a Gateway name, or namespace/name'],
    ]);
  });

  it("checks the certificate secret name of a gateway server", async () => {
    const gw = `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata: {name: gw}
spec:
  selector: {istio: ingressgateway}
  servers:
    - port: {number: 443, name: https, protocol: HTTPS}
      hosts: [a.example.com]
      tls: {mode: SIMPLE, credentialName: My_Cert}
`;
    const d = await check({ "clusters/a/values.yaml": MESH_ON, "clusters/a/mesh/gw.yaml": gw });
    expect(d.map((x) => [x[1], x[4], x[5]])).to.deep.equal([
      [
        9,
        "schema",
        'invalid name "My_Cert" at spec.servers[0].tls.credentialName: must be a DNS-1123 subdomain (lower-case letters, digits, "-" and ".")',
      ],
    ]);
  });

  it("skips empty documents between separators but warns on a file with none", async () => {
    const d = await check({
      "clusters/a/values.yaml": MESH_ON,
      "clusters/a/mesh/vs.yaml": `---\n${VS("reviews")}---\n`,
      "clusters/a/mesh/empty.yaml": "# nothing yet\n",
    });
    expect(d.map((x) => [x[0], x[3], x[4]])).to.deep.equal([["mesh/empty.yaml", "warning", "empty-file"]]);
  });
});
