// The doctor check of API discovery: missing mesh CRDs and a metrics group the APIService does not serve.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoveredKinds, servedKinds } from "../../src/ops/doctor/kinds.js";
import type { HostSnapshot } from "../../src/ops/doctor/types.js";
import { effectiveValues } from "../../src/validate/values.js";
import { startKubeServer } from "../support/kube-server/index.js";
import { tempDir, vc } from "./helpers.js";

function snapshot(missingKinds: string[] | undefined, mesh = true, apiServiceAvailable = true): HostSnapshot {
  return {
    cluster: "a",
    namespace: "vc-a",
    pods: [],
    events: [],
    pvcs: [],
    deployments: [],
    gateways: [],
    ingressPods: [],
    ingressServices: [],
    existingSecrets: [],
    serviceAccounts: [],
    services: [],
    virtualServices: [],
    destinationRules: [],
    slowReads: [],
    metricsApiService: {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.orch.io" },
      status: { conditions: [{ type: "Available", status: apiServiceAvailable ? "True" : "False" }] },
    },
    values: effectiveValues({ integrations: { mesh: { enabled: mesh }, metricsServer: { enabled: true } } }),
    ...(missingKinds ? { missingKinds } : {}),
  };
}

const MESH = [
  "networking.mesh.io/v1beta1/DestinationRule",
  "networking.mesh.io/v1beta1/Gateway",
  "networking.mesh.io/v1beta1/VirtualService",
];

describe("ops: doctor served-kinds check", () => {
  it("one error naming the missing mesh kinds and the prerequisite when the mesh integration is on", () => {
    const findings = servedKinds(snapshot(MESH));
    expect(findings).to.have.length(1);
    expect(findings[0]).to.include({
      check: "mesh-crds",
      severity: "error",
      object: "APIGroup networking.mesh.io/v1beta1",
    });
    expect(findings[0]!.message).to.include("DestinationRule, Gateway, VirtualService");
    expect(findings[0]!.resolution).to.include("CRDs (group suffix mesh.io)");
  });

  it("nothing when the CRDs are there, the mesh is off, or discovery was not read", () => {
    expect(servedKinds(snapshot([]))).to.deep.equal([]);
    expect(servedKinds(snapshot(MESH, false))).to.deep.equal([]);
    expect(servedKinds(snapshot(undefined))).to.deep.equal([]);
  });

  it(
    "a metrics group missing from discovery while its APIService says Available; not again when the APIService " +
      "is down",
    () => {
      const missing = ["metrics.orch.io/v1beta1/NodeMetrics", "metrics.orch.io/v1beta1/PodMetrics"];
      expect(servedKinds(snapshot(missing)).map((f) => f.check)).to.deep.equal(["metrics-api-group"]);
      expect(servedKinds(snapshot(missing, true, false))).to.deep.equal([]);
    },
  );

  it("asks discovery about the configured hostApiGroup, and reads a missing kind there only", () => {
    expect(discoveredKinds("metrics.example.io").filter((k) => k.kind.endsWith("Metrics"))).to.deep.equal([
      { apiVersion: "metrics.example.io/v1beta1", kind: "PodMetrics" },
      { apiVersion: "metrics.example.io/v1beta1", kind: "NodeMetrics" },
    ]);
    const s = snapshot(["metrics.orch.io/v1beta1/PodMetrics"]);
    s.values!.integrations.metricsServer.proxy.hostApiGroup = "metrics.example.io";
    expect(servedKinds(s)).to.deep.equal([]);
    s.missingKinds = ["metrics.example.io/v1beta1/PodMetrics"];
    expect(servedKinds(s).map((f) => f.object)).to.deep.equal(["APIGroup metrics.example.io/v1beta1"]);
  });

  it("vc doctor on a host without the mesh CRDs reports them", async function () {
    this.timeout(30_000);
    const server = await startKubeServer({ namespaces: ["default", "vc-a"] });
    try {
      server.faults.add({ path: /^\/apis\/networking\.mesh\.io\//, status: 404 });
      const repo = tempDir();
      mkdirSync(join(repo, "clusters/a"), { recursive: true });
      writeFileSync(join(repo, "clusters/a/values.yaml"), "integrations:\n  mesh:\n    enabled: true\n");
      const res = await vc(["doctor", "a", "--kubeconfig", server.kubeconfigPath, "--repo", repo]);
      expect(res.code).to.equal(1);
      expect(res.stdout + res.stderr).to.include("the host does not serve DestinationRule, Gateway, VirtualService");
    } finally {
      await server.close();
    }
  });
});
