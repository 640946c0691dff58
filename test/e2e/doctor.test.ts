// vc doctor on a real API server: a host vc applied and an operator broke (no control-plane pod, a route to a missing
// Service, a pod without requests, no TLS Secret for the metrics proxy, metrics RBAC on the wrong group, a mesh
// conflict in the live configuration); the findings, their severities and the exit codes of errors, warnings and notes.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { breakDoctorHost, SHOP_FINDINGS, writeDoctorRepo } from "../ops/doctor-host.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = {
  problems: number;
  counts: Record<string, number>;
  findings: Array<{ check: string; severity: string; object: string; message: string; resolution: string }>;
};

describe("e2e: vc doctor on a broken host", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const doctor = (...args: string[]) =>
    runVc(["doctor", ...args, "--kubeconfig", kube().kubeconfigPath, "--repo", repo]);

  before(async () => {
    await installMeshCrds(kube());
    repo = writeDoctorRepo();
    await breakDoctorHost(kube().kubeconfigPath, repo);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("reports each fault with its check, severity and the spec's resolution; exit 1 on errors", async () => {
    const res = await doctor("shop", "-o", "json");
    expect(res.code, res.stdout + res.stderr).to.equal(1);
    const report = JSON.parse(res.stdout) as Report;
    expect(report.findings.map((f) => `${f.check} ${f.severity} ${f.object}`).sort()).to.deep.equal(
      [...SHOP_FINDINGS].sort(),
    );
    expect(report.counts).to.deep.equal({ error: 8, warning: 1, note: 2 });
    const by = (check: string) => report.findings.find((f) => f.check === check)!;
    expect(by("control-plane-pod").message).to.match(
      /^the StatefulSet wants 1 replica\(s\) but pod shop-0 does not exist/,
    );
    expect(by("control-plane-pod").resolution).to.match(
      /^restart the stateful set, check service account, network policies, resource constraints; /,
    );
    expect(by("mesh-destination").message).to.equal(
      "route destination reviews-x-default-x-shop.vc-shop.svc.cluster.local names Service " +
        "vc-shop/reviews-x-default-x-shop, which does not exist on the host (the virtual cluster's service reviews " +
        "in namespace default: not synced)",
    );
    expect(by("metrics-forbidden").message).to.equal(
      "HTTP 403 Forbidden: system:serviceaccount:vc-system:vc-metrics-proxy may not get, list pods.metrics.k8s.io " +
        "in vc-shop",
    );
    expect(by("metrics-proxy-tls").resolution).to.include(
      "kubectl -n vc-system create secret tls vc-metrics-proxy-tls",
    );
    expect(by("pod-requests").message).to.equal(
      "containers without resource requests: app (cpu, memory): an autoscaler shows <unknown> for their utilisation",
    );
    expect(by("mesh-custom-resource").message).to.include(
      'also set in sync.toHost.customResources: "virtualservices.networking.mesh.io"',
    );
    const text = await doctor("shop");
    expect(text.stdout.split("\n")[0]).to.equal(
      "virtual cluster shop (namespace vc-shop): 8 errors, 1 warning, 2 notes",
    );
    expect(text.stdout)
      .to.contain("\nerrors:\nERROR [")
      .and.contain("\nwarnings:\nWARNING [pod-requests]")
      .and.contain("\nnotes:\nNOTE [");
  });

  it("once the faults are fixed with kubectl, their findings go", async () => {
    const k = (args: string[]) => kube().kubectl(args);
    expect(
      (await k(["-n", "vc-shop", "create", "service", "clusterip", "reviews-x-default-x-shop", "--tcp=9080:9080"]))
        .code,
    ).to.equal(0);
    expect(
      (
        await k([
          "-n",
          "vc-system",
          "create",
          "secret",
          "generic",
          "vc-metrics-proxy-tls",
          "--from-literal=tls.crt=x",
          "--from-literal=tls.key=y",
        ])
      ).code,
    ).to.equal(0);
    const res = await doctor("shop", "-o", "json");
    const checks = (JSON.parse(res.stdout) as Report).findings.map((f) => f.check);
    expect(checks).to.not.include("mesh-destination");
    expect(checks).to.not.include("metrics-proxy-tls");
    expect(checks).to.include("control-plane-pod");
  });

  it("warnings and notes exit 0, warnings exit 1 with --strict; notes alone never fail", async () => {
    const res = await doctor("calm");
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stdout.split("\n")[0]).to.equal("virtual cluster calm (namespace vc-calm): 0 errors, 1 warning, 1 note");
    expect(res.stdout).to.contain("WARNING [pod-pending] Pod vc-calm/calm-0: Pending, cause not yet visible");
    expect((await doctor("calm", "--strict")).code).to.equal(1);
    const scaled = await kube().kubectl(["-n", "vc-calm", "delete", "pod", "calm-0", "--wait=false"]);
    expect(scaled.code, scaled.stderr).to.equal(0);
    expect((await kube().kubectl(["-n", "vc-calm", "scale", "statefulset", "calm", "--replicas=0"])).code).to.equal(0);
    const notes = await doctor("calm", "--strict");
    expect(notes.code, notes.stdout + notes.stderr).to.equal(0);
    expect(notes.stdout.split("\n")[0]).to.equal("virtual cluster calm (namespace vc-calm): no problems found, 1 note");
  });
});
