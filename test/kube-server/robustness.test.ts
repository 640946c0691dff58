// Bad input never crashes the server: random methods, paths, content types and bodies get Status answers, never a 500.
import { expect } from "chai";
import fc from "fast-check";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call } from "./helpers.js";

const SEGMENTS = [
  "api",
  "apis",
  "v1",
  "apps",
  "namespaces",
  "default",
  "ghost",
  "configmaps",
  "pods",
  "deployments",
  "scale",
  "status",
  "log",
  "x",
  "%zz",
  "..",
  "metrics.orch.io",
  "v1beta1",
  "nodes",
  "",
];
const TYPES = [
  "application/json",
  "application/merge-patch+json",
  "application/json-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml",
  "application/vnd.kubernetes.protobuf",
  "text/plain",
];
const BODIES = fc.oneof(
  fc.constant(""),
  fc.string(),
  fc.json(),
  fc.constant("k8s\u0000garbage"),
  fc.constant('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}'),
  fc.constant('[{"op":"remove","path":"/nope"}]'),
  fc.constant("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [1]}\n"),
);

describe("kube-server: robustness", function () {
  this.timeout(60_000);
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer();
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" } });
  });
  after(async () => server.close());

  it("answers every random request with a status below 500 and a Status body for errors", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
        fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 7 }),
        fc.constantFrom(...TYPES),
        BODIES,
        fc.constantFrom(
          "",
          "?labelSelector=a%20in%20(",
          "?fieldManager=f",
          "?limit=-1",
          "?continue=zz",
          "?dryRun=All",
          "?fieldSelector=spec.x%3D1",
          "?watch=true&resourceVersion=abc",
        ),
        async (method, segments, type, body, query) => {
          const path = `/${segments.join("/")}${query}`;
          const r = await call(server, method, path, method === "GET" || method === "DELETE" ? undefined : body, {
            contentType: type,
          });
          expect(r.status, `${method} ${path} ${type} ${JSON.stringify(body)}: ${r.text}`).to.be.below(500);
          if (r.status >= 400)
            expect(r.body, `${method} ${path}: ${r.text}`).to.include({
              kind: "Status",
              status: "Failure",
              code: r.status,
            });
        },
      ),
      { numRuns: 400 },
    );
  });
});
