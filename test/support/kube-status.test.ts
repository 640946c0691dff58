// The stand-in controllers (kube-status.ts) on the API test server: what they report makes vc read a cluster Healthy,
// Degraded on demand, and a changed pod template replaces the pod with one of the new revision (its claim kept).
import { expect } from "chai";
import { readClusterHealth } from "../../src/health/read.js";
import type { KubeObject } from "../../src/kube/object.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "./kube-server/index.js";
import { StandInControllers, templateRevision } from "./kube-status.js";
import { exampleRepo, runVc } from "./cli-repo.js";

describe("support: stand-in controllers on the API test server", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let client: KubeClient;
  let repo: string;
  let desired: KubeObject[];
  let hosts: StandInControllers;

  before(async () => {
    server = await startKubeServer();
    server.addUser("controllers", [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], "controllers");
    client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    repo = exampleRepo(["platform"]);
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", server.kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    desired = (JSON.parse((await runVc(["render", repo, "-o", "json"])).stdout) as { items: KubeObject[] }).items;
    hosts = new StandInControllers({
      request: async (method, path, body) => {
        const res = await fetch(server.url + path, {
          method,
          headers: { Authorization: "Bearer controllers", "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as never };
      },
    });
  });
  after(async () => {
    client?.close();
    await server?.close();
  });

  it("reports the StatefulSet, its pods and the claims: the cluster is Healthy", async () => {
    expect((await readClusterHealth(client, "vc-platform", desired)).status).to.equal("Progressing");
    expect((await hosts.settle()).reported).to.deep.equal(["vc-platform"]);
    const h = await readClusterHealth(client, "vc-platform", desired);
    expect(h.status, JSON.stringify(h)).to.equal("Healthy");
    expect(h.objects.map((o) => o.object)).to.include.members([
      "Pod vc-platform/platform-0",
      "PersistentVolumeClaim vc-platform/data-platform-0",
    ]);
    // Nothing changed: the next pass writes nothing.
    const mark = server.requests.length;
    expect((await hosts.settle()).reported).to.deep.equal([]);
    expect(server.requests.slice(mark).filter((r) => r.method !== "GET")).to.deep.equal([]);
  });

  it("a fault makes the pod of the update revision CrashLoopBackOff (Degraded); healed, Healthy again", async () => {
    hosts.degrade("vc-platform");
    await hosts.settle();
    expect(await readClusterHealth(client, "vc-platform", desired)).to.deep.include({
      status: "Degraded",
      reason: "pod platform-0 CrashLoopBackOff",
    });
    hosts.heal("vc-platform");
    await hosts.settle();
    expect((await readClusterHealth(client, "vc-platform", desired)).status).to.equal("Healthy");
  });

  it(
    "a changed pod template: the old revision's pod is replaced by one of the new revision, the set " + "reports it",
    async () => {
      const before = server.get("v1", "Pod", "vc-platform", "platform-0")!;
      const sts = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")!;
      const changed = structuredClone(sts) as KubeObject & {
        spec: { template: { metadata: { annotations?: Record<string, string> } } };
      };
      changed.spec.template.metadata.annotations = {
        ...changed.spec.template.metadata.annotations,
        "example.com/restart": "1",
      };
      await client.request("PUT", "/apis/apps/v1/namespaces/vc-platform/statefulsets/platform", { body: changed });
      await hosts.settle();
      const live = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")!;
      const pod = server.get("v1", "Pod", "vc-platform", "platform-0")!;
      expect(pod.metadata.uid).to.not.equal(before.metadata.uid);
      expect(pod.metadata.labels?.["controller-revision-hash"])
        .to.equal(templateRevision(live))
        .and.not.equal(before.metadata.labels?.["controller-revision-hash"]);
      expect(live.status).to.deep.include({
        updateRevision: templateRevision(live),
        currentRevision: templateRevision(live),
        observedGeneration: live.metadata.generation,
      });
      expect((await readClusterHealth(client, "vc-platform", desired)).status).to.equal("Healthy");
    },
  );
});
