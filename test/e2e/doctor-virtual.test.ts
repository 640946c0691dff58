// vc doctor's checks inside the virtual cluster, with two real API servers: the host, and a second one playing the
// virtual cluster, reached through the kubeconfig in the host Secret vc-<name> as vc connect reaches it. Its own
// APIService list is read (the metrics API service absent, then registered and Available), and an autoscaler showing
// <unknown> gets the pod metrics of its workload asked through the virtual server's aggregated metrics API.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selfSignedCertificate } from "../support/kube-server/tls.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = {
  findings: Array<{ check: string; severity: string; object: string; message: string }>;
  notChecked: Record<string, string>;
};

/**
 * The metrics API of the virtual cluster as the metrics proxy serves it, with metrics for `pods` of namespace default.
 */
function podMetricsBackend(dir: string, pods: string[]): Server {
  const cert = selfSignedCertificate(dir);
  return createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://backend");
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    if (url.pathname === "/apis/metrics.orch.io/v1beta1") {
      return send(200, {
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "metrics.orch.io/v1beta1",
        resources: [{ name: "pods", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] }],
      });
    }
    if (url.pathname === "/apis/metrics.orch.io/v1beta1/namespaces/default/pods") {
      const items = pods.map((name) => ({
        kind: "PodMetrics",
        apiVersion: "metrics.orch.io/v1beta1",
        metadata: { name, namespace: "default", labels: { app: "web" } },
        timestamp: new Date().toISOString(),
        window: "30s",
        containers: [{ name: "web", usage: { cpu: "5m", memory: "10Mi" } }],
      }));
      return send(200, { kind: "PodMetricsList", apiVersion: "metrics.orch.io/v1beta1", metadata: {}, items });
    }
    send(404, { kind: "Status", code: 404, message: "not found" });
  });
}

describe("e2e: vc doctor reads inside the virtual cluster (a second real API server)", function () {
  this.timeout(180_000);
  const host = useRealKube();
  const virtual = useRealKube();
  let repo: string;
  let backend: Server;
  const doctor = async (...extra: string[]): Promise<Report> => {
    const res = await runVc([
      "doctor",
      "auto",
      "-o",
      "json",
      "--kubeconfig",
      host().kubeconfigPath,
      "--repo",
      repo,
      ...extra,
    ]);
    expect(res.stderr).to.equal("");
    return JSON.parse(res.stdout) as Report;
  };
  const of = (r: Report, ...checks: string[]) =>
    r.findings.filter((f) => checks.includes(f.check)).map((f) => `${f.check} ${f.severity} ${f.object}: ${f.message}`);
  const create = async (path: string, body: unknown) => {
    const res = await virtual().request("POST", path, body);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
  };

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-doctor-virtual-"));
    mkdirSync(join(repo, "clusters/auto"), { recursive: true });
    writeFileSync(join(repo, "clusters/auto/values.yaml"), "integrations:\n  metricsServer:\n    enabled: true\n");
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", host().kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    // The control plane writes its kubeconfig into the host Secret vc-<name>: here, the second server's.
    const secret = await host().kubectl([
      "-n",
      "vc-auto",
      "create",
      "secret",
      "generic",
      "vc-auto",
      `--from-file=config=${virtual().kubeconfigPath}`,
    ]);
    expect(secret.code, secret.stderr).to.equal(0);
    backend = podMetricsBackend(repo, ["web-1"]);
    await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    await new Promise((r) => backend?.close(r));
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it("the virtual cluster's APIService list without the metrics API service is reported", async () => {
    expect(of(await doctor(), "metrics-api-service", "metrics-virtual-api")).to.deep.equal([
      `metrics-api-service error APIService v1beta1.metrics.orch.io (virtual cluster): the virtual cluster's API ` +
        `service list has no v1beta1.metrics.orch.io (asked ${virtual().url}): metrics.orch.io is missing there`,
    ]);
  });

  it(
    "an autoscaler showing <unknown>: the pods of its workload without pod metrics are named; with its " +
      "metrics, quiet",
    async () => {
      const port = (backend.address() as AddressInfo).port;
      await create("/api/v1/namespaces/kube-system/services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "vc-metrics-proxy" },
        spec: { type: "ExternalName", externalName: "localhost", ports: [{ port }] },
      });
      await create("/apis/apiregistration.k8s.io/v1/apiservices", {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: "v1beta1.metrics.orch.io" },
        spec: {
          group: "metrics.orch.io",
          version: "v1beta1",
          service: { namespace: "kube-system", name: "vc-metrics-proxy", port },
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      });
      await waitFor(
        async () =>
          (await virtual().request("GET", "/apis/metrics.orch.io/v1beta1/namespaces/default/pods")).status === 200,
        "the virtual metrics API to be served",
        60_000,
      );
      const labels = { app: "web" };
      await create("/apis/apps/v1/namespaces/default/deployments", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "web:1" }] } },
        },
      });
      for (const name of ["web-1", "web-2"])
        await create("/api/v1/namespaces/default/pods", {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, labels },
          spec: { containers: [{ name: "web", image: "web:1" }] },
        });
      await create("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", {
        apiVersion: "autoscaling/v1",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "web" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
          minReplicas: 1,
          maxReplicas: 3,
          targetCPUUtilizationPercentage: 75,
        },
      });
      const report = await doctor();
      expect(of(report, "metrics-api-service", "metrics-virtual-api")).to.deep.equal([]);
      expect(of(report, "pod-metrics")).to.deep.equal([
        "pod-metrics warning HorizontalPodAutoscaler default/web (virtual cluster): shows <unknown>: 1 of 2 pod(s) " +
          "of Deployment default/web have no pod metrics (web-2)",
      ]);
      // The autoscaler's controller reports a current value (through the status subresource): no longer <unknown>.
      const status = await virtual().request(
        "PATCH",
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web/status",
        { status: { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 40 } },
        { contentType: "application/merge-patch+json" },
      );
      expect(status.status, JSON.stringify(status.body)).to.equal(200);
      expect(of(await doctor(), "pod-metrics")).to.deep.equal([]);
    },
  );

  it("a virtual API server that does not answer from here is listed as not checked, with how to reach it", async () => {
    const report = await doctor("--server", "https://127.0.0.1:1");
    expect(report.notChecked.virtual, report.notChecked.virtual).to.match(
      /^the virtual API server https:\/\/127\.0\.0\.1:1 does not answer \((ECONNREFUSED|connection refused)\)$/,
    );
    expect(of(report, "metrics-api-service", "pod-metrics")).to.deep.equal([]);
  });
});
