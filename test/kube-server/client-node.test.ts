// The server with @kubernetes/client-node 1.4, which vc uses: typed reads and lists, errors, watch, metrics, and the
// token.
import * as k8s from "@kubernetes/client-node";
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

describe("kube-server: @kubernetes/client-node", function () {
  this.timeout(20_000);
  let server: KubeServer;
  let kc: k8s.KubeConfig;
  before(async () => {
    server = await startKubeServer({ anonymous: "reject" });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
  });
  after(async () => server.close());

  it("reads and lists typed objects with selectors, sending the kubeconfig's token", async () => {
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "default", labels: { app: "x" } },
      data: { k: "v" },
    });
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b", namespace: "default", labels: { app: "y" } },
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedConfigMap({ namespace: "default", labelSelector: "app=x" });
    expect(list.items.map((i) => i.metadata?.name)).to.deep.equal(["a"]);
    const one = await core.readNamespacedConfigMap({ namespace: "default", name: "a" });
    expect(one.data).to.deep.equal({ k: "v" });
    expect(server.requests.at(-1)!.user).to.equal("admin");
  });

  it("surfaces Status errors as ApiException with the code and JSON body", async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    try {
      await core.readNamespacedConfigMap({ namespace: "default", name: "missing" });
      expect.fail("expected a 404");
    } catch (err) {
      expect((err as k8s.ApiException<string>).code).to.equal(404);
      expect(JSON.parse((err as k8s.ApiException<string>).body).reason).to.equal("NotFound");
    }
  });

  it("watches with client-node's Watch", async () => {
    const seen: string[] = [];
    const rv = server.resourceVersion;
    const req = await new k8s.Watch(kc).watch(
      "/api/v1/namespaces/default/configmaps",
      { resourceVersion: rv },
      (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name}`),
      () => {},
    );
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "w", namespace: "default" } });
    server.remove("v1", "ConfigMap", "default", "w");
    for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    req.abort();
    expect(seen).to.deep.equal(["ADDED w", "DELETED w"]);
  });

  it("runs client-node's Exec against the exec handler, with stdin and the exit status", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "sh", namespace: "default" },
      spec: { containers: [{ name: "c", image: "i" }] },
      status: { phase: "Running" },
    });
    server.onExec((s) => {
      s.stdin?.on("data", (d: Buffer) => s.stdout.write(`got ${d.toString()}`));
      s.stdin?.on("end", () => s.exit(4));
    });
    const { PassThrough } = await import("node:stream");
    const stdout = new PassThrough();
    const stdin = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    const status = await new Promise<k8s.V1Status>((resolve, reject) => {
      new k8s.Exec(kc)
        .exec("default", "sh", "c", ["sh"], stdout, null, stdin, false, (st) => resolve(st))
        .catch(reject);
      setTimeout(() => stdin.end("hello"), 100);
    });
    expect(out).to.equal("got hello");
    expect(status.status).to.equal("Failure");
    expect(status.details?.causes).to.deep.equal([{ reason: "ExitCode", message: "4" }]);
  });

  it("reads pod metrics with client-node's Metrics (metrics.k8s.io)", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default" },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
    server.setPodMetrics("default", "p", [{ name: "c", usage: { cpu: "5m", memory: "7Mi" } }]);
    const metrics = await new k8s.Metrics(kc).getPodMetrics("default");
    expect(metrics.items.map((m) => [m.metadata.name, m.containers[0]!.usage.cpu])).to.deep.equal([["p", "5m"]]);
  });
});
