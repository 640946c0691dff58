// Proof that the test server speaks the real protocol: the real kubectl (v1.32) gets, applies, diffs, deletes, selects
// and tops.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { kubectl } from "../support/kubectl.js";

const cm = (value: string, labels = "app: web") => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  labels: {${labels}}
data:
  mode: "${value}"
`;

describe("kube-server: the real kubectl", function () {
  this.timeout(60_000);
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer();
  });
  after(async () => server.close());

  it("applies server-side (create, update), prints tables and JSON, and deletes", async () => {
    const created = await kubectl(server, ["apply", "--server-side", "-f", "-"], { input: cm("a") });
    expect(created, created.stderr).to.include({ code: 0 });
    expect(created.stdout).to.equal("configmap/settings serverside-applied\n");
    const updated = await kubectl(server, ["apply", "--server-side", "-f", "-"], { input: cm("b") });
    expect(updated.code, updated.stderr).to.equal(0);

    const table = await kubectl(server, ["get", "configmaps"]);
    expect(table.code, table.stderr).to.equal(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).to.match(/^NAME\s+DATA\s+AGE$/);
    expect(lines[1]).to.match(/^settings\s+1\s+\d+s$/);

    const json = await kubectl(server, ["get", "configmap", "settings", "-o", "json"]);
    const obj = JSON.parse(json.stdout);
    expect(obj.data).to.deep.equal({ mode: "b" });
    expect(obj.metadata.uid).to.equal(server.get("v1", "ConfigMap", "default", "settings")!.metadata.uid);

    const managed = JSON.parse(
      (await kubectl(server, ["get", "cm", "settings", "-o", "json", "--show-managed-fields"])).stdout,
    ).metadata.managedFields;
    expect(managed).to.have.length(1);
    expect(managed[0]).to.include({ manager: "kubectl", operation: "Apply", fieldsType: "FieldsV1" });
    expect(managed[0].fieldsV1).to.deep.equal({
      "f:data": { "f:mode": {} },
      "f:metadata": { "f:labels": { "f:app": {} } },
    });

    const deleted = await kubectl(server, ["delete", "configmap", "settings"]);
    expect(deleted.stdout).to.equal('configmap "settings" deleted\n');
    expect(server.get("v1", "ConfigMap", "default", "settings")).to.equal(undefined);
    const missing = await kubectl(server, ["get", "configmap", "settings"]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('Error from server (NotFound): configmaps "settings" not found');
  });

  it("shows an apply conflict between two field managers and resolves it with --force-conflicts", async () => {
    expect(
      (await kubectl(server, ["apply", "--server-side", "--field-manager=team-a", "-f", "-"], { input: cm("a") })).code,
    ).to.equal(0);
    const clash = await kubectl(server, ["apply", "--server-side", "--field-manager=team-b", "-f", "-"], {
      input: cm("b"),
    });
    expect(clash.code).to.equal(1);
    expect(clash.stderr).to.include('Apply failed with 1 conflict: conflict with "team-a": .data.mode');
    expect(clash.stderr).to.include("--force-conflicts");
    expect(server.get("v1", "ConfigMap", "default", "settings")!.data).to.deep.equal({ mode: "a" });

    const forced = await kubectl(
      server,
      ["apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-f", "-"],
      { input: cm("b") },
    );
    expect(forced.code, forced.stderr).to.equal(0);
    const live = server.get("v1", "ConfigMap", "default", "settings")!;
    expect(live.data).to.deep.equal({ mode: "b" });
    const owners = Object.fromEntries(
      (live.metadata.managedFields as Array<{ manager: string; fieldsV1: object }>).map((m) => [m.manager, m.fieldsV1]),
    );
    expect(owners["team-b"]).to.deep.equal({
      "f:data": { "f:mode": {} },
      "f:metadata": { "f:labels": { "f:app": {} } },
    });
    expect(owners["team-a"]).to.deep.equal({ "f:metadata": { "f:labels": { "f:app": {} } } });
    await kubectl(server, ["delete", "configmap", "settings"]);
  });

  it("diffs: exit 0 without changes, exit 1 with the diff text otherwise (server-side and client-side)", async () => {
    await kubectl(server, ["apply", "--server-side", "-f", "-"], { input: cm("a") });
    const same = await kubectl(server, ["diff", "--server-side", "-f", "-"], { input: cm("a") });
    expect(same.code, same.stderr).to.equal(0);
    expect(same.stdout).to.equal("");
    const changed = await kubectl(server, ["diff", "--server-side", "-f", "-"], { input: cm("b") });
    expect(changed.code, changed.stderr).to.equal(1);
    expect(changed.stdout).to.match(/^-\s+mode: a$/m);
    expect(changed.stdout).to.match(/^\+\s+mode: b$/m);
    const clientSide = await kubectl(server, ["diff", "-f", "-"], { input: cm("c") });
    expect(clientSide.code, clientSide.stderr).to.equal(1);
    expect(clientSide.stdout).to.match(/^\+\s+mode: c$/m);
    expect(clientSide.stdout).to.not.include("annotations: {}");
    expect(server.get("v1", "ConfigMap", "default", "settings")!.data).to.deep.equal({ mode: "a" });
    await kubectl(server, ["delete", "configmap", "settings"]);
  });

  it("selects with -l, equality and set-based", async () => {
    for (const [name, labels] of [
      ["web-1", { app: "web", tier: "front" }],
      ["web-2", { app: "web", tier: "back" }],
      ["api-1", { app: "api", tier: "back" }],
      ["bare", {}],
    ] as const) {
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default", labels: { ...labels } },
        data: {},
      });
    }
    const names = async (selector: string) =>
      (await kubectl(server, ["get", "cm", "-l", selector, "-o", "name"])).stdout.trim().split("\n").filter(Boolean);
    expect(await names("app=web")).to.deep.equal(["configmap/web-1", "configmap/web-2"]);
    expect(await names("app in (web,api),tier!=front")).to.deep.equal(["configmap/api-1", "configmap/web-2"]);
    expect(await names("!app")).to.deep.equal(["configmap/bare"]);
    expect(await names("tier notin (back)")).to.deep.equal(["configmap/bare", "configmap/web-1"]);
    const bad = await kubectl(server, ["get", "cm", "-l", "app in web"]);
    expect(bad.code).to.equal(1);
    for (const n of ["web-1", "web-2", "api-1", "bare"]) server.remove("v1", "ConfigMap", "default", n);
  });

  it("reads discovery and the metrics API with get --raw, and kubectl top shows the metrics", async () => {
    const apis = JSON.parse((await kubectl(server, ["get", "--raw", "/apis"])).stdout);
    expect(apis.kind).to.equal("APIGroupList");
    expect(apis.groups.map((g: { name: string }) => g.name)).to.include.members([
      "apps",
      "metrics.orch.io",
      "metrics.k8s.io",
      "networking.mesh.io",
    ]);
    const core = JSON.parse((await kubectl(server, ["get", "--raw", "/api/v1"])).stdout);
    expect(core.resources.find((r: { name: string }) => r.name === "pods")).to.deep.include({
      kind: "Pod",
      namespaced: true,
      shortNames: ["po"],
    });

    server.put({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "node-1", labels: { zone: "a" } },
      status: { allocatable: { cpu: "4", memory: "8Gi" }, capacity: { cpu: "4", memory: "8Gi" } },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "default", labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "nginx" }] },
      status: { phase: "Running" },
    });
    server.setPodMetrics("default", "web-1", [{ name: "app", usage: { cpu: "15m", memory: "20Mi" } }]);
    server.setNodeMetrics("node-1", { cpu: "500m", memory: "2Gi" });

    const raw = JSON.parse(
      (
        await kubectl(server, [
          "get",
          "--raw",
          "/apis/metrics.orch.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb",
        ])
      ).stdout,
    );
    expect(raw.kind).to.equal("PodMetricsList");
    expect(raw.items[0]).to.deep.include({ kind: "PodMetrics", apiVersion: "metrics.orch.io/v1beta1", window: "30s" });
    expect(raw.items[0].metadata).to.include({ name: "web-1", namespace: "default" });
    expect(raw.items[0].containers).to.deep.equal([{ name: "app", usage: { cpu: "15m", memory: "20Mi" } }]);

    const pods = await kubectl(server, ["top", "pod"]);
    expect(pods.code, pods.stderr).to.equal(0);
    expect(pods.stdout).to.match(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    expect(pods.stdout).to.match(/^web-1\s+15m\s+20Mi\s*$/m);
    const nodes = await kubectl(server, ["top", "node"]);
    expect(nodes.code, nodes.stderr).to.equal(0);
    expect(nodes.stdout).to.match(/^node-1\s+500m\s+12%\s+2048Mi\s+25%\s*$/m);

    server.setMetricsAvailable(false);
    const down = await kubectl(server, ["top", "pod"]);
    expect(down.code).to.equal(1);
    expect(down.stderr).to.include("Metrics API not available");
    server.setMetricsAvailable(true);
  });

  it(
    "applies client-side (create, update, unchanged) for built-in and mesh kinds, and describes a pod with " +
      "its events",
    async () => {
      const manifest = (subset: string, image: string) => `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http: [{route: [{destination: {host: reviews, subset: ${subset}}}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "${image}", env: [{name: A, value: "1"}]}]}
`;
      expect((await kubectl(server, ["apply", "-f", "-"], { input: manifest("v1", "api:1") })).stdout).to.equal(
        "virtualservice.networking.mesh.io/reviews created\ndeployment.apps/api created\n",
      );
      const changed = await kubectl(server, ["apply", "-f", "-"], { input: manifest("v2", "api:2") });
      expect(changed.stdout, changed.stderr).to.equal(
        "virtualservice.networking.mesh.io/reviews configured\ndeployment.apps/api configured\n",
      );
      expect((await kubectl(server, ["apply", "-f", "-"], { input: manifest("v2", "api:2") })).stdout).to.equal(
        "virtualservice.networking.mesh.io/reviews unchanged\ndeployment.apps/api unchanged\n",
      );
      const dep = server.get("apps/v1", "Deployment", "default", "api")! as any;
      expect(dep.spec.template.spec.containers).to.deep.equal([
        { name: "api", image: "api:2", env: [{ name: "A", value: "1" }] },
      ]);
      expect(dep.metadata.generation).to.equal(2);
      expect(
        (server.get("networking.mesh.io/v1beta1", "VirtualService", "default", "reviews") as any).spec.http[0].route[0]
          .destination.subset,
      ).to.equal("v2");

      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "api-1", namespace: "default", uid: "ignored" },
        spec: { nodeName: "node-1", containers: [{ name: "api", image: "api:2" }] },
        status: { phase: "Running" },
      });
      server.put({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "api-1.1", namespace: "default" },
        involvedObject: {
          kind: "Pod",
          name: "api-1",
          namespace: "default",
          uid: server.get("v1", "Pod", "default", "api-1")!.metadata.uid,
        },
        reason: "BackOff",
        message: "Back-off restarting failed container",
        type: "Warning",
        count: 3,
      });
      const described = await kubectl(server, ["describe", "pod", "api-1"]);
      expect(described.code, described.stderr).to.equal(0);
      expect(described.stdout).to.match(/Warning\s+BackOff\s+.*Back-off restarting failed container/);
      await kubectl(server, ["delete", "-f", "-"], { input: manifest("v2", "api:2") });
      expect(server.get("apps/v1", "Deployment", "default", "api")).to.equal(undefined);
    },
  );

  it("reads pod logs by container, previous and tail", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "two", namespace: "default" },
      spec: {
        containers: [
          { name: "app", image: "a" },
          { name: "side", image: "b" },
        ],
      },
      status: { phase: "Running" },
    });
    server.setPodLog("default", "two", "app", "one\ntwo\nthree\n");
    server.setPodLog("default", "two", "side", "before crash\n", { previous: true });
    expect((await kubectl(server, ["logs", "two", "-c", "app", "--tail=2"])).stdout).to.equal("two\nthree\n");
    expect((await kubectl(server, ["logs", "two", "-c", "side", "--previous"])).stdout).to.equal("before crash\n");
  });

  it("creates namespaces, config maps and secrets with the typed (protobuf) kubectl create commands", async () => {
    expect((await kubectl(server, ["create", "namespace", "made"])).code).to.equal(0);
    const c = await kubectl(server, [
      "create",
      "configmap",
      "conf",
      "-n",
      "made",
      "--from-literal=a=1",
      "--from-literal=b=2",
    ]);
    expect(c.code, c.stderr).to.equal(0);
    const s = await kubectl(server, [
      "create",
      "secret",
      "generic",
      "pw",
      "-n",
      "made",
      "--from-literal=password=hunter2",
    ]);
    expect(s.code, s.stderr).to.equal(0);
    expect(server.get("v1", "ConfigMap", "made", "conf")!.data).to.deep.equal({ a: "1", b: "2" });
    const secret = server.get("v1", "Secret", "made", "pw")!;
    expect(secret.data).to.deep.equal({ password: Buffer.from("hunter2").toString("base64") });
    expect(secret.type).to.equal("Opaque");
    const dep = await kubectl(server, ["create", "deployment", "x", "--image=nginx", "-n", "made"]);
    expect(dep.code).to.equal(1);
    expect(dep.stderr).to.include("decodes protobuf bodies only for Namespace, ConfigMap, Secret and ServiceAccount");
    expect((await kubectl(server, ["delete", "namespace", "made"])).code).to.equal(0);
    expect(server.list("v1", "ConfigMap", "made")).to.deep.equal([]);
  });

  it("watches with get -w: a table row per change, ending when the server ends the watch", async () => {
    const watching = kubectl(server, ["get", "configmaps", "-l", "watched=yes", "-w", "--output-watch-events"], {
      timeoutMs: 20_000,
    });
    for (let i = 0; i < 200 && server.openWatches === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(server.openWatches).to.equal(1);
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "w1", namespace: "default", labels: { watched: "yes" } },
      data: { a: "1" },
    });
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "w1", namespace: "default", labels: { watched: "yes" } },
      data: { a: "1", b: "2" },
    });
    server.remove("v1", "ConfigMap", "default", "w1");
    await new Promise((r) => setTimeout(r, 300));
    server.closeWatches();
    const r = await watching;
    const rows = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/).slice(0, 3).join(" "));
    expect(rows, r.stdout + r.stderr).to.deep.equal(["EVENT NAME DATA", "ADDED w1 1", "MODIFIED w1 2", "DELETED w1 2"]);
  });

  it("scales a deployment through the scale subresource", async () => {
    const dep = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "i" }] } },
      },
    };
    server.put(dep);
    const r = await kubectl(server, ["scale", "deployment", "web", "--replicas=4"]);
    expect(r.code, r.stderr).to.equal(0);
    expect((server.get("apps/v1", "Deployment", "default", "web")!.spec as { replicas: number }).replicas).to.equal(4);
    expect(server.countRequests({ resource: "deployments/scale", method: "PATCH" })).to.equal(1);
  });
});
