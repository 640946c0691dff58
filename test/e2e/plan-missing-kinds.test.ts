// On a real API server without the mesh and cert-manager CRDs: one clear error per cluster instead of a 404 per object;
// nothing of it applied until the host serves every kind it needs.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { installCertManagerCrds, installMeshCrds, useRealKube, type RealKube } from "../support/real-kube.js";
import { exampleRepo, kubectl, runVc, totals, vcOn } from "./plan-support.js";

describe("e2e: kinds the host does not serve", function () {
  this.timeout(180_000);
  const kube = useRealKube();
  let host: RealKube;
  let repo: string;

  before(async () => {
    host = kube();
    repo = exampleRepo(["minimal", "bookinfo", "platform"]);
  });
  after(async () => {
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it(
    "apply: one error for the cluster with mesh objects and certificates, naming each group, its kinds and the " +
      "prerequisite; the other clusters are applied",
    async () => {
      const res = await vcOn(host, "apply", repo);
      expect(res.code).to.equal(1);
      const errors = res.stdout.split("\n").filter((l) => l.startsWith("! "));
      expect(errors).to.have.length(1);
      expect(errors[0]).to.include(
        "the host does not serve Certificate (cert-manager.io/v1): cert-manager's custom resource definitions are " +
          "missing",
      );
      expect(errors[0]).to.include(
        "integrations.certManager.enabled: false in clusters/bookinfo/values.yaml and remove " +
          "clusters/bookinfo/certificates/",
      );
      expect(errors[0]).to.include(
        "; DestinationRule, Gateway, VirtualService (networking.mesh.io/v1beta1): the mesh's custom resource " +
          "definitions are missing",
      );
      expect(errors[0])
        .to.include("CRDs (group suffix mesh.io)")
        .and.include("integrations.mesh.enabled: false in clusters/bookinfo/values.yaml");
      expect(res.stdout + res.stderr).to.not.include("404");
      expect(res.stdout).to.match(
        /cluster bookinfo: 0 created, 0 updated, 0 deleted, 0 unchanged, 0 failed, \d+ skipped/,
      );
      expect(totals(res.stdout)[4], "no failed object").to.equal(0);
      const namespaces = (await kubectl(host, ["get", "namespaces", "-o", "name"])).split("\n");
      expect(namespaces)
        .to.include.members(["namespace/vc-minimal", "namespace/vc-platform"])
        .and.not.include("namespace/team-bookinfo");
    },
  );

  it(
    "diff shows the same error; vc doctor names the missing CRDs; once the mesh CRDs are installed only " +
      "cert-manager's are named; with both the cluster applies",
    async () => {
      const diff = await vcOn(host, "diff", repo, "--cluster", "bookinfo");
      expect(diff.stdout)
        .to.include("! the host does not serve Certificate (cert-manager.io/v1)")
        .and.include("DestinationRule, Gateway, VirtualService (networking.mesh.io/v1beta1)");
      // vc doctor needs the host namespace: create it as an operator would before installing the mesh.
      await kubectl(host, ["create", "namespace", "team-bookinfo"]);
      const doctor = await runVc(["doctor", "bookinfo", "--kubeconfig", host.kubeconfigPath, "--repo", repo]);
      expect(doctor.stdout).to.include(
        "ERROR [mesh-crds] APIGroup networking.mesh.io/v1beta1: the host does not serve DestinationRule, Gateway, " +
          "VirtualService",
      );

      await installMeshCrds(host);
      const meshOnly = await vcOn(host, "apply", repo, "--cluster", "bookinfo");
      expect(meshOnly.code).to.equal(1);
      const left = meshOnly.stdout.split("\n").filter((l) => l.startsWith("! "));
      expect(left).to.have.length(1);
      expect(left[0])
        .to.include("the host does not serve Certificate (cert-manager.io/v1)")
        .and.not.include("networking.mesh.io");
      expect(totals(meshOnly.stdout)[0], "nothing of the cluster created").to.equal(0);

      await installCertManagerCrds(host);
      // The operator made the namespace, not vc: it is a conflict until taken over on purpose.
      const foreign = await vcOn(host, "apply", repo, "--cluster", "bookinfo");
      expect(foreign.code, foreign.stdout).to.equal(1);
      expect(foreign.stdout).to.include(
        "! conflict: Namespace team-bookinfo (managed by kubectl-create) already exists on the host and is not in " +
          "cluster bookinfo's record",
      );
      expect(totals(foreign.stdout)[0], "nothing of the cluster created").to.equal(0);
      const adopted = await runVc([
        "adopt",
        "bookinfo",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        host.kubeconfigPath,
        "--take-ownership",
        "Namespace/team-bookinfo",
      ]);
      expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
      const apply = await vcOn(host, "apply", repo, "--cluster", "bookinfo");
      expect(apply.code, apply.stdout).to.equal(0);
      expect(totals(apply.stdout)[4]).to.equal(0);
      expect((await vcOn(host, "diff", repo, "--exit-code")).code).to.equal(0);
    },
  );
});
