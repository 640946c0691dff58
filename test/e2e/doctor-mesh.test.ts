// vc doctor's mesh checks on a real API server: the mesh objects the repository renders for a cluster compared with
// the host's under their translated names (a deleted VirtualService and DestinationRule, a DestinationRule edited on
// the host), and each route's subset looked up in the host's DestinationRules; a synced cluster is quiet.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = { findings: Array<{ check: string; severity: string; object: string; message: string }> };

const MESH = `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
    - route:
        - destination: {host: reviews, subset: v1}
---
apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata: {name: reviews, namespace: default}
spec:
  host: reviews
  subsets:
    - {name: v1, labels: {version: v1}}
`;

describe("e2e: vc doctor compares the repository's mesh objects with the host", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const meshFindings = async (): Promise<string[]> => {
    const res = await runVc(["doctor", "routes", "-o", "json", "--kubeconfig", kube().kubeconfigPath, "--repo", repo]);
    expect(res.stderr).to.equal("");
    return (JSON.parse(res.stdout) as Report).findings
      .filter((f) => f.check.startsWith("mesh-"))
      .map((f) => `${f.check} ${f.object}: ${f.message}`);
  };
  const k = async (args: string[]) => {
    const res = await kube().kubectl(args);
    expect(res.code, res.stderr).to.equal(0);
  };

  before(async () => {
    await installMeshCrds(kube());
    repo = mkdtempSync(join(tmpdir(), "vc-doctor-mesh-"));
    mkdirSync(join(repo, "clusters/routes/mesh"), { recursive: true });
    writeFileSync(join(repo, "clusters/routes/values.yaml"), "integrations:\n  mesh:\n    enabled: true\n");
    writeFileSync(join(repo, "clusters/routes/mesh/reviews.yaml"), MESH);
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    // The syncer would sync the virtual cluster's Service; the namespace is labelled for injection.
    await k(["-n", "vc-routes", "create", "service", "clusterip", "reviews-x-default-x-routes", "--tcp=9080:9080"]);
    await k(["label", "namespace", "vc-routes", "mesh-injection=enabled"]);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("is quiet while the host has what the repository renders", async () => {
    expect(await meshFindings()).to.deep.equal([]);
  });

  it(
    "a DestinationRule edited on the host: the difference by path, and the route's subset it no longer " + "defines",
    async () => {
      await k([
        "-n",
        "vc-routes",
        "patch",
        "destinationrules.networking.mesh.io",
        "reviews-x-default-x-routes",
        "--type=merge",
        "-p",
        '{"spec":{"subsets":[{"name":"v2","labels":{"version":"v2"}}]}}',
      ]);
      const found = await meshFindings();
      expect(found[0]).to.match(
        /^mesh-not-synced DestinationRule vc-routes\/reviews-x-default-x-routes: the host's DestinationRule differs from the repository's \(from clusters\/routes\/mesh\/reviews\.yaml\) at spec\.subsets\[0\]\.\S+: the mesh applies the host's$/,
      );
      expect(found.slice(1)).to.deep.equal([
        "mesh-subset VirtualService vc-routes/reviews-x-default-x-routes: route to " +
          "reviews-x-default-x-routes.vc-routes.svc.cluster.local subset v1: the DestinationRule for " +
          "reviews-x-default-x-routes.vc-routes.svc.cluster.local on the host defines no subset v1; the mesh " +
          "rejects the route (no healthy upstream)",
      ]);
    },
  );

  it("the synced VirtualService and every DestinationRule deleted: each reported by its translated name", async () => {
    await k([
      "-n",
      "vc-routes",
      "delete",
      "virtualservices.networking.mesh.io,destinationrules.networking.mesh.io",
      "--all",
    ]);
    expect(await meshFindings()).to.deep.equal([
      "mesh-not-synced DestinationRule vc-routes/reviews-x-default-x-routes: the repository's DestinationRule " +
        "(from clusters/routes/mesh/reviews.yaml) is not on the host under its translated name " +
        "reviews-x-default-x-routes: the rule is not applied",
      "mesh-not-synced VirtualService vc-routes/reviews-x-default-x-routes: the repository's VirtualService (from " +
        "clusters/routes/mesh/reviews.yaml) is not on the host under its translated name " +
        "reviews-x-default-x-routes: the rule is not applied",
    ]);
  });
});
