// Server-side field validation and server warnings: vc's writes ask for fieldValidation=Strict, so a field the server
// does not know is refused instead of dropped where the server validates fields (current), and every Warning header
// the server returns reaches vc's output. On 1.20, which neither validates nor warns, the field is dropped silently:
// vc's own schema validation is what stands between a tenant's typo and the host there.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { KubeApiError, KubeClient, refusalMessage } from "../../src/host/client.js";
import {
  parseWarningHeaders,
  resetServerWarnings,
  setWarningSink,
  type ServerWarning,
  type WarningSink,
} from "../../src/host/warnings.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { describeProfiles } from "../support/profiles.js";
import { runVc } from "../support/vc.js";

const withBogus = (name: string): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default" },
    data: { a: "1" },
    bogus: "typo",
  }) as KubeObject;

describe("host/warnings: Warning headers", () => {
  it('reads the API server\'s `299 - "text"` values, several in one header, escaped quotes, and anything else whole', () => {
    expect(
      parseWarningHeaders(['299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"']),
    ).to.deep.equal(["v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"]);
    expect(parseWarningHeaders(['299 - "unknown field \\"spec.bogus\\"", 299 - "a, b"'])).to.deep.equal([
      'unknown field "spec.bogus"',
      "a, b",
    ]);
    expect(parseWarningHeaders(["not in the usual form"])).to.deep.equal(["not in the usual form"]);
    expect(parseWarningHeaders([])).to.deep.equal([]);
  });
});

describe("host/client: refusals in vc's words", () => {
  it("says the same of a refusal whatever the release's wording: code, reason, each cause's field and type", () => {
    const refusal = (message: string) => ({
      kind: "Status",
      code: 422,
      reason: "Invalid",
      message,
      details: {
        name: "db",
        group: "apps",
        kind: "StatefulSet",
        causes: [{ reason: "FieldValueForbidden", field: "spec", message }],
      },
    });
    const old = refusalMessage(
      422,
      "Unprocessable Entity",
      refusal(
        'StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than ' +
          "'replicas', 'template', and 'updateStrategy' are forbidden",
      ),
    );
    const current = refusalMessage(
      422,
      "Unprocessable Entity",
      refusal(
        'StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than ' +
          "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', " +
          "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
    const ours = "422 Invalid: spec: may not be set or changed (the server said: ";
    expect(old.startsWith(ours) && current.startsWith(ours), `${old}\n${current}`).to.equal(true);
    expect(refusalMessage(403, "Forbidden", { reason: "Forbidden", message: "pods is forbidden: no" })).to.equal(
      "403 pods is forbidden: no",
    );
    expect(refusalMessage(500, "Internal Server Error", "not json")).to.equal("500 Internal Server Error");
    expect(new KubeApiError("PATCH", "/x", 422, "Unprocessable Entity", refusal("m")).causes).to.deep.equal([
      { field: "spec", reason: "FieldValueForbidden" },
    ]);
  });
});

describeProfiles("host: field validation and server warnings", (profile) => {
  let server: KubeServer;
  let client: KubeClient;
  let told: ServerWarning[];
  let previous: WarningSink;

  beforeEach(async () => {
    server = await startKubeServer({ profile });
    client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    told = [];
    resetServerWarnings();
    previous = setWarningSink((w) => told.push(w));
  });
  afterEach(async () => {
    setWarningSink(previous);
    resetServerWarnings();
    client.close();
    await server.close();
  });

  it("sends fieldValidation=Strict with every write, and never with a read", async () => {
    await client.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "plain", namespace: "default" },
      data: { a: "1" },
    } as KubeObject);
    await client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "plain" });
    const queries = server.requests
      .filter((r) => r.path.endsWith("/configmaps/plain"))
      .map((r) => `${r.method} ${new URLSearchParams(r.query).get("fieldValidation")}`);
    expect(queries).to.deep.equal(["PATCH Strict", "GET null"]);
  });

  it(
    profile === "current"
      ? "an unknown field is refused (400 BadRequest) and nothing is written"
      : "an unknown field is dropped without a word (1.20 ignores fieldValidation)",
    async () => {
      const result = await client.apply(withBogus("typo")).then(
        (o) => o,
        (e: unknown) => e,
      );
      if (profile === "current") {
        expect(result).to.be.instanceOf(KubeApiError);
        expect((result as KubeApiError).status).to.equal(400);
        expect(((result as KubeApiError).body as { reason?: string }).reason).to.equal("BadRequest");
        expect(server.get("v1", "ConfigMap", "default", "typo")).to.equal(undefined);
      } else {
        expect(result).to.not.be.instanceOf(Error);
        const stored = server.get("v1", "ConfigMap", "default", "typo") as Record<string, unknown>;
        expect(stored.data).to.deep.equal({ a: "1" });
        expect(stored).to.not.have.property("bogus");
      }
      expect(told).to.deep.equal([]);
    },
  );

  it(
    profile === "current"
      ? "a custom resource's unknown field is refused (400)"
      : "a custom resource's unknown field is dropped",
    async () => {
      const vs = {
        apiVersion: "networking.mesh.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "web", namespace: "default" },
        spec: { hosts: ["web"] },
        bogus: 1,
      } as unknown as KubeObject;
      const result = await client.apply(vs).then(
        (o) => o,
        (e: unknown) => e,
      );
      if (profile === "current") expect((result as KubeApiError).status).to.equal(400);
      else
        expect(server.get("networking.mesh.io/v1beta1", "VirtualService", "default", "web")).to.not.have.property(
          "bogus",
        );
    },
  );

  it(
    "tells every warning the server returns, once per server and text (a field dropped under Warn " + "is one)",
    async () => {
      await client.request("POST", "/api/v1/namespaces/default/configmaps", {
        body: withBogus("warned"),
        query: { fieldValidation: "Warn" },
      });
      await client.request("POST", "/api/v1/namespaces/default/configmaps", {
        body: withBogus("warned-again"),
        query: { fieldValidation: "Warn" },
      });
      server.faults.add({
        path: "/api/v1/namespaces/default/configmaps",
        warning: "v1 ConfigMap is deprecated in v9.99+",
      });
      await client.request("GET", "/api/v1/namespaces/default/configmaps");
      await client.request("GET", "/api/v1/namespaces/default/configmaps");
      const texts = told.map((w) => w.text);
      if (profile === "current")
        expect(texts).to.deep.equal(['unknown field "bogus"', "v1 ConfigMap is deprecated in v9.99+"]);
      else expect(texts).to.deep.equal(["v1 ConfigMap is deprecated in v9.99+"]);
      expect(told.at(-1)).to.include({
        server: server.url,
        method: "GET",
        path: "/api/v1/namespaces/default/configmaps",
      });
    },
  );

  it("a vc command prints the server's warnings on stderr, its output unchanged", async () => {
    try {
      // The records namespace exists (a platform namespace), so vc status lists its ConfigMaps.
      server.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
      });
      server.faults.add({ path: /\/configmaps$/, warning: "the host says: mind the gap" });
      setWarningSink(previous); // the command's own sink (runVc runs vc in this process)
      const res = await runVc(["status", "--target", "kube", "--kubeconfig", server.kubeconfigPath, "-o", "json"]);
      expect(res.code, res.stderr).to.equal(0);
      expect(JSON.parse(res.stdout), "nothing reconciled yet: the data, not the warning").to.deep.equal([]);
      expect(res.stderr.split("\n").filter((l) => l.includes("mind the gap"))).to.have.length(1);
      expect(res.stderr).to.include(server.url);
    } finally {
      server.faults.clear();
    }
  });
});
