// The metrics proxy against a real host API server: its pod index watches real Pod objects, and it reads pod metrics
// through the host's aggregated metrics API (an APIService routed by the real server, see metrics-backend.ts).
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { silentLogger } from "../../src/model/log.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { get, HOST_NS, hostNameOf, hostPod, type PodSpec } from "../metrics-proxy/fixture.js";
import { installHostMetrics, metricsBackend, PODS } from "./metrics-backend.js";

describe("e2e: the metrics proxy against a real host API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let dir: string;
  let backend: Server;
  let proxy: RunningProxy | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-metrics-"));
    backend = metricsBackend(dir);
    await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
    await installHostMetrics(kube(), backend);
    const config = parseFlags([
      "--cluster",
      "a",
      "--host-namespace",
      HOST_NS,
      "--kubeconfig",
      kube().kubeconfigPath,
      "--listen",
      "127.0.0.1:0",
      "--host-api-group",
      "metrics.k8s.io",
    ]);
    proxy = await startProxy(config, { log: silentLogger, processMetrics: false, retryMs: 100, syncWaitMs: 5000 });
    expect(await proxy.informer.waitSynced(10_000)).to.equal(true);
  });
  after(async () => {
    await proxy?.close();
    await new Promise((r) => backend?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a namespace's pod metrics with virtual names, only the cluster's pods, from the real host", async () => {
    const res = await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods");
    expect(res.status, res.text).to.equal(200);
    const items = res.body.items as Array<{
      metadata: { name: string; namespace: string; labels: Record<string, string> };
      containers: Array<{ usage: { cpu: string } }>;
    }>;
    expect(
      items.map((i) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0]!.usage.cpu}`).sort(),
    ).to.deep.equal(["default/db=12m", "default/web=11m"]);
    for (const i of items)
      expect(Object.keys(i.metadata.labels).some((k) => k.startsWith("vc.orch.io/"))).to.equal(false);
  });

  it("a single pod, all namespaces, and 404 for another cluster's or an unsynced pod", async () => {
    const one = await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/team/pods/web");
    expect(one.status, one.text).to.equal(200);
    expect(one.body.containers[0].usage.cpu).to.equal("13m");
    const all = await get(proxy!, "/apis/metrics.orch.io/v1beta1/pods");
    expect((all.body.items as Array<{ metadata: { name: string } }>).length).to.equal(3);
    expect(all.text).to.not.include("21m").and.not.include("99m").and.not.include(hostNameOf(PODS[0]!));
    expect((await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/unsynced")).status).to.equal(404);
  });

  it("follows the real watch: a pod synced later appears, a deleted one goes", async () => {
    const late: PodSpec = { cluster: "a", namespace: "default", name: "late", labels: { app: "late" } };
    const created = await kube().request("POST", `/api/v1/namespaces/${HOST_NS}/pods`, hostPod(late));
    expect(created.status).to.equal(201);
    const gone = await kube().request(
      "DELETE",
      `/api/v1/namespaces/${HOST_NS}/pods/${hostNameOf(PODS[1]!)}?gracePeriodSeconds=0`,
    );
    expect(gone.status).to.equal(200);
    await waitFor(
      async () => (await get(proxy!, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/db")).status === 404,
      "the deleted pod to leave the index",
      30_000,
    );
  });
});
