// The example fleet against a real kube-apiserver: apply, a no-op diff with no writes, drift by kubectl detected and
// converged, fields and list items of other writers left alone, and pruning that keeps what vc does not own.
import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");

describe("e2e: the example fleet on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const vc = (command: string, ...args: string[]) =>
    runVc([command, repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, ...args]);
  const adminWrites = () => kube().writes("admin").length;

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-e2e-fleet-"));
    cpSync(EXAMPLE, join(repo, "clusters"), { recursive: true });
    await installExampleCrds(kube());
    const applied = await vc("apply");
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("applied every cluster, and a no-op diff exits 0 with no writes", async () => {
    const sts = await kube().kubectl(["-n", "vc-platform", "get", "statefulset", "platform", "-o", "name"]);
    expect(sts.stdout.trim()).to.equal("statefulset.apps/platform");
    const vs = await kube().kubectl(["-n", "team-bookinfo", "get", "virtualservices.networking.mesh.io", "-o", "name"]);
    expect(vs.stdout).to.contain("reviews-x-bookinfo-x-bookinfo");
    const before = adminWrites();
    const diff = await vc("diff", "--prune", "--exit-code");
    expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
    const again = await vc("apply", "--prune");
    expect(again.code, again.stderr).to.equal(0);
    expect(adminWrites() - before, JSON.stringify(kube().writes("admin").slice(before))).to.equal(0);
  });

  it("detects drift made with kubectl (scale, a route weight, a deleted object) and converges it", async () => {
    expect(
      (await kube().kubectl(["-n", "vc-platform", "scale", "statefulset", "platform", "--replicas=3"])).code,
    ).to.equal(0);
    const weight = await kube().kubectl([
      "-n",
      "team-bookinfo",
      "patch",
      "virtualservices.networking.mesh.io",
      "reviews-x-bookinfo-x-bookinfo",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/http/1/route/0/weight","value":50}]',
    ]);
    expect(weight.code, weight.stderr).to.equal(0);
    const removed = await kube().kubectl(["-n", "vc-minimal", "delete", "service", "minimal-headless"]);
    expect(removed.code, removed.stderr).to.equal(0);

    const drift = await vc("diff", "--exit-code");
    expect(drift.code, drift.stderr).to.equal(1);
    expect(drift.stdout)
      .to.match(/replicas/)
      .and.to.match(/weight/)
      .and.to.contain("minimal-headless");

    const applied = await vc("apply");
    expect(applied.code, applied.stderr).to.equal(0);
    const clean = await vc("diff", "--exit-code");
    expect(clean.code, clean.stdout).to.equal(0);
    const replicas = await kube().kubectl([
      "-n",
      "vc-platform",
      "get",
      "statefulset",
      "platform",
      "-o",
      "jsonpath={.spec.replicas}",
    ]);
    expect(replicas.stdout).to.equal("1");
  });

  it(
    "fields and list items of other writers (an env var, an annotation, a container) are not drift and cause " +
      "no writes",
    async () => {
      expect(
        (await kube().kubectl(["-n", "vc-platform", "set", "env", "statefulset/platform", "FOO=bar"])).code,
      ).to.equal(0);
      expect(
        (
          await kube().kubectl([
            "-n",
            "vc-platform",
            "annotate",
            "statefulset/platform",
            "team.example.com/owner=db-team",
          ])
        ).code,
      ).to.equal(0);
      const sidecar = await kube().kubectl(
        ["apply", "--server-side", "--field-manager=sidecar-injector", "--validate=false", "-f", "-"],
        {
          input: JSON.stringify({
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            metadata: { name: "platform", namespace: "vc-platform" },
            spec: { template: { spec: { containers: [{ name: "log-shipper", image: "example.com/shipper:1" }] } } },
          }),
        },
      );
      expect(sidecar.code, sidecar.stderr).to.equal(0);

      const before = adminWrites();
      const diff = await vc("diff", "--exit-code");
      expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
      const applied = await vc("apply");
      expect(applied.code, applied.stderr).to.equal(0);
      expect(adminWrites() - before, JSON.stringify(kube().writes("admin").slice(before))).to.equal(0);
      const containers = await kube().kubectl([
        "-n",
        "vc-platform",
        "get",
        "statefulset",
        "platform",
        "-o",
        "jsonpath={.spec.template.spec.containers[*].name}",
      ]);
      expect(containers.stdout.split(" ")).to.include("log-shipper");
    },
  );

  it("prune keeps objects vc does not own and other clusters' objects", async () => {
    const foreign = await kube().kubectl(["-n", "vc-minimal", "create", "configmap", "not-ours", "--from-literal=a=b"]);
    expect(foreign.code, foreign.stderr).to.equal(0);
    rmSync(join(repo, "clusters", "bookinfo", "mesh", "ratings.yaml"));
    const pruned = await runVc([
      "apply",
      repo,
      "--cluster",
      "bookinfo",
      "--prune",
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigPath,
    ]);
    expect(pruned.code, pruned.stdout + pruned.stderr).to.equal(0);

    const vs = await kube().kubectl(["-n", "team-bookinfo", "get", "virtualservices.networking.mesh.io", "-o", "name"]);
    expect(vs.stdout).to.not.contain("ratings-x-bookinfo-x-bookinfo");
    expect(vs.stdout).to.contain("reviews-x-bookinfo-x-bookinfo");
    expect((await kube().kubectl(["-n", "vc-minimal", "get", "configmap", "not-ours"])).code).to.equal(0);
    expect((await kube().kubectl(["-n", "vc-platform", "get", "statefulset", "platform"])).code).to.equal(0);
    const all = await runVc(["apply", repo, "--prune", "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
    expect(all.code, all.stderr).to.equal(0);
    expect((await kube().kubectl(["-n", "vc-minimal", "get", "configmap", "not-ours"])).code).to.equal(0);
  });
});
