// The host's one shared metrics proxy on a real host API server, running as its deployed ServiceAccount
// (deploy/metrics-proxy/: RBAC and status ConfigMap, and each cluster's rendered Role reading its kubeconfig Secret).
// Two real virtual API servers register it with the objects vc renders, each through its own front proxy (their CAs
// share a name, as control planes' do): `kubectl top pod` in each shows that cluster's pods only. Then the cross-tenant
// cases with the two clusters and with many (twenty more, each a virtual API server of the test's own with a
// front-proxy CA of its own): every cluster reads exactly its own pods, every bad credential gets 401.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { parseReplicaStatus } from "../../src/model/proxy-status.js";
import { silentLogger } from "../../src/model/log.js";
import { renderMetricsProxy, VIRTUAL_SERVICE_NAME } from "../../src/render/metricsProxy.js";
import { LABELS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { useRealKube, waitFor, type RealKube } from "../support/real-kube.js";
import { clientOf, frontProxyPki, type FrontProxyPki } from "../metrics-proxy/certs.js";
import { hostNameOf } from "../metrics-proxy/fixture.js";
import { authenticationConfigMap } from "../metrics-proxy/shared-fixture.js";
import { createPods, installHostMetrics, metricsBackend, type BackendPod } from "./metrics-backend.js";
import { clientPair, direct, registerInVirtual, servingPair } from "./metrics-support.js";

const ROOT = join(import.meta.dirname, "..", "..");
const GROUP = "metrics.k8s.io";
/** A user each real virtual API server authorizes for everything (its RBAC lets `viewer` read one namespace). */
const MASTER = { "X-Remote-User": "admin", "X-Remote-Group": "system:masters" };
const G = `/apis/${GROUP}/v1beta1`;

/** The pods of the two real clusters: their own, one a's syncer plants labelled as b's, one nobody's. */
const PODS: BackendPod[] = [
  { cluster: "a", hostNamespace: "vc-a", namespace: "default", name: "web", cpu: "11m" },
  { cluster: "a", hostNamespace: "vc-a", namespace: "default", name: "db", cpu: "12m" },
  { cluster: "a", hostNamespace: "vc-a", namespace: "team", name: "web", cpu: "13m" },
  { cluster: "b", hostNamespace: "vc-b", namespace: "default", name: "web", cpu: "21m" },
  { cluster: "b", hostNamespace: "vc-b", namespace: "default", name: "api", cpu: "22m" },
  { cluster: "b", hostNamespace: "vc-a", namespace: "default", name: "planted", cpu: "99m" },
  { hostNamespace: "vc-a", namespace: "default", name: "unsynced", hostName: "unsynced", cpu: "98m" },
];

describe("e2e: one shared metrics proxy for the host's virtual clusters", function () {
  this.timeout(300_000);
  const host = useRealKube();
  const va = useRealKube({ users: [{ name: "viewer" }, { name: "nobody" }] });
  const vb = useRealKube({ users: [{ name: "viewer" }] });
  let dir: string;
  let backend: Server;
  let serving: { cert: string; key: string; ca: string };
  let proxy: RunningProxy | undefined;
  const pods = [...PODS];
  const fakes: KubeServer[] = [];

  const k = async (kube: RealKube, args: string[], input?: string) => {
    const res = await kube.kubectl(args, input === undefined ? {} : { input });
    expect(res.code, `kubectl ${args.join(" ")}: ${res.stderr}`).to.equal(0);
  };
  /** What vc and the control plane put on the host for a cluster: its marked Namespace, Role and kubeconfig Secret. */
  const markCluster = async (name: string, kubeconfig: string) => {
    const ns = `vc-${name}`;
    const labelled = await host().request(
      "PATCH",
      `/api/v1/namespaces/${ns}`,
      { metadata: { labels: { [LABELS.managedBy]: name, [LABELS.metricsProxy]: "synced" } } },
      { contentType: "application/merge-patch+json" },
    );
    expect(labelled.status, JSON.stringify(labelled.body)).to.equal(200);
    await k(
      host(),
      ["apply", "-f", "-"],
      JSON.stringify({ apiVersion: "v1", kind: "List", items: renderMetricsProxy(name, ns) }),
    );
    const secret = await host().request("POST", `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `vc-${name}`, namespace: ns },
      data: { config: Buffer.from(kubeconfig).toString("base64") },
    });
    expect(secret.status, JSON.stringify(secret.body)).to.equal(201);
  };
  const frontProxyOf = (v: RealKube) => ({ cert: v.pki.frontProxyClientCert, key: v.pki.frontProxyClientKey });
  const as = (
    client: { cert: string; key: string } | undefined,
    path: string,
    headers: Record<string, string> = { "X-Remote-User": "viewer" },
  ) => direct(proxy!, path, serving.ca, client, headers);
  const cpus = (text: string) =>
    (
      JSON.parse(text) as {
        items: Array<{ metadata: { namespace: string; name: string }; containers: Array<{ usage: { cpu: string } }> }>;
      }
    ).items
      .map((i) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0]!.usage.cpu}`)
      .sort();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-shared-"));
    backend = metricsBackend(dir, () => pods);
    await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
    await installHostMetrics(host(), backend, pods);
    // The platform deploys the shared proxy's identity (its Deployment's pods are this test's in-process proxy).
    for (const file of ["deploy/reconciler/namespace.yaml", "deploy/metrics-proxy/serviceaccount.yaml"])
      await k(host(), ["apply", "-f", join(ROOT, file)]);
    for (const file of ["rbac.yaml", "configmap.yaml"])
      await k(host(), ["apply", "-f", join(ROOT, "deploy/metrics-proxy", file)]);
    for (const [name, v] of [
      ["a", va()],
      ["b", vb()],
    ] as const)
      await markCluster(name, readFileSync(v.kubeconfigPath, "utf8"));
    serving = servingPair(dir, "serving");
    proxy = await startProxy(
      parseFlags([
        ...["--kubeconfig", await host().serviceAccountKubeconfig("vc-system", "vc-metrics-proxy")],
        ...["--listen", "127.0.0.1:0", "--tls-cert", serving.cert, "--tls-key", serving.key, "--tls-ca", serving.ca],
        ...["--api-group", GROUP, "--host-api-group", GROUP, "--virtual-server", "kubeconfig"],
        ...["--replica-name", "e2e-0", "--refresh-interval", "1s"],
      ]),
      { log: silentLogger, processMetrics: false, retryMs: 200, syncWaitMs: 5000 },
    );
    for (const v of [va(), vb()]) {
      await registerInVirtual(v, GROUP, VIRTUAL_SERVICE_NAME, Number(new URL(proxy.url).port));
      await v.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "metrics-viewer", namespace: "default" },
        rules: [{ apiGroups: ["", GROUP], resources: ["pods"], verbs: ["get", "list"] }],
      });
      await k(v, [
        "-n",
        "default",
        "create",
        "rolebinding",
        "metrics-viewer",
        "--role=metrics-viewer",
        "--user=viewer",
      ]);
    }
  });
  after(async () => {
    await proxy?.close();
    for (const f of fakes) await f.close();
    await new Promise((r) => backend?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "loads both clusters as its own ServiceAccount and writes its CA " +
      "into each one's APIService, which is Available",
    async () => {
      const wanted = `${readFileSync(serving.ca, "utf8").trim()}\n`;
      for (const v of [va(), vb()])
        await waitFor(
          async () => {
            const res = await v.request<{
              spec: { caBundle?: string };
              status?: { conditions?: Array<{ type: string; status: string }> };
            }>("GET", `/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.${GROUP}`);
            return (
              Buffer.from(res.body.spec.caBundle ?? "", "base64").toString("utf8") === wanted &&
              res.body.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") === true
            );
          },
          `${v.url}'s APIService to carry the proxy's CA and be Available`,
          90_000,
        );
      expect(proxy!.registry!.counts).to.deep.equal({ clusters: 2, loaded: 2 });
    },
  );

  it("kubectl top pod through each of the two virtual clusters shows that cluster's pods, and only those", async () => {
    const top = async (v: RealKube, ns: string) => {
      let res = await v.kubectl(["top", "pod", "-n", ns, "--no-headers"]);
      await waitFor(
        async () => (res = await v.kubectl(["top", "pod", "-n", ns, "--no-headers"])).code === 0,
        `kubectl top pod in ${v.url} to answer`,
        60_000,
      );
      return res.stdout
        .trim()
        .split("\n")
        .map((l) => l.trim().split(/\s+/).slice(0, 2).join(" "))
        .sort();
    };
    expect(await top(va(), "default")).to.deep.equal(["db 12m", "web 11m"]);
    expect(await top(va(), "team")).to.deep.equal(["web 13m"]);
    expect(await top(vb(), "default")).to.deep.equal(["api 22m", "web 21m"]);
    // Through each virtual API server, as the users its RBAC lets (and does not let) read metrics.
    const raw = await va().kubectl(["get", "--raw", `${G}/namespaces/default/pods`], { as: "viewer" });
    expect(cpus(raw.stdout)).to.deep.equal(["default/db=12m", "default/web=11m"]);
    const nobody = await va().kubectl(["get", "--raw", `${G}/namespaces/default/pods`], { as: "nobody" });
    expect(nobody.code).to.not.equal(0);
    expect(nobody.stderr).to.match(/forbidden/i);
  });

  it("two clusters: each front proxy reads its own cluster only; every bad credential gets 401", async () => {
    expect(cpus((await as(frontProxyOf(va()), `${G}/pods`, MASTER)).text)).to.deep.equal([
      "default/db=12m",
      "default/web=11m",
      "team/web=13m",
    ]);
    const b = await as(frontProxyOf(vb()), `${G}/pods`, MASTER);
    expect(cpus(b.text)).to.deep.equal(["default/api=22m", "default/web=21m"]);
    expect(b.text).to.not.include("99m").and.not.include("98m");
    expect((await as(frontProxyOf(va()), `${G}/namespaces/default/pods/api`, MASTER)).status).to.equal(404);
    expect((await as(frontProxyOf(vb()), `${G}/namespaces/default/pods/planted`, MASTER)).status).to.equal(404);
    expect((await as(frontProxyOf(vb()), `${G}/namespaces/team/pods/web`, MASTER)).status).to.equal(404);
    const stranger = clientPair(dir, "stranger", "front-proxy-client", serving.ca, join(dir, "serving-ca.key"));
    const wrongName = clientPair(
      dir,
      "wrong-name",
      "intruder",
      va().pki.frontProxyCaCert,
      join(va().dir, "pki", "front-proxy-ca.key"),
    );
    const admin = { "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" };
    for (const [what, client, headers] of [
      ["no certificate", undefined, admin],
      ["a CA no cluster publishes", stranger, admin],
      ["a name the cluster does not allow", wrongName, admin],
      ["no user header", frontProxyOf(va()), {}],
      ["a bearer token (the virtual cluster admin's)", undefined, { Authorization: `Bearer ${va().adminToken}` }],
    ] as const) {
      const res = await as(client, `${G}/pods`, headers);
      expect(res.status, `${what}: ${res.text}`).to.equal(401);
      expect(res.text, what).to.not.match(/1\dm|2\dm|9\dm/);
    }
  });

  it(
    "many clusters: twenty more beside the two, each reads exactly " + "its own pods; 401 for every bad credential",
    async () => {
      const MANY = 20;
      const extra: Array<{ name: string; pki: FrontProxyPki }> = [];
      for (let i = 0; i < MANY; i++) {
        const name = `m${i}`;
        const pki = frontProxyPki();
        const virtual = await startKubeServer({ tls: true, namespaces: ["default", "kube-system"] });
        fakes.push(virtual);
        virtual.put(authenticationConfigMap(pki.caPem) as never);
        virtual.put({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "metrics-reader" },
          rules: [{ apiGroups: [GROUP], resources: ["pods"], verbs: ["get", "list"] }],
        } as never);
        virtual.put({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "metrics-reader" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "metrics-reader" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "viewer" }],
        } as never);
        virtual.put({
          apiVersion: "apiregistration.k8s.io/v1",
          kind: "APIService",
          metadata: { name: `v1beta1.${GROUP}` },
          spec: { group: GROUP, version: "v1beta1", groupPriorityMinimum: 100, versionPriority: 100 },
        } as never);
        // Each one's own pod, and one its syncer plants labelled as the next cluster's.
        const own: BackendPod = {
          cluster: name,
          hostNamespace: `vc-${name}`,
          namespace: "default",
          name: "web",
          cpu: `${300 + i}m`,
        };
        const planted: BackendPod = {
          cluster: `m${(i + 1) % MANY}`,
          hostNamespace: `vc-${name}`,
          namespace: "default",
          name: `taken-${i}`,
          cpu: `${600 + i}m`,
        };
        pods.push(own, planted);
        await createPods(host(), [own, planted]);
        await markCluster(name, readFileSync(virtual.kubeconfigPath, "utf8"));
        extra.push({ name, pki });
      }
      await waitFor(() => proxy!.registry!.counts.loaded === 2 + MANY, "every cluster to be loaded", 120_000);
      const front = (pki: FrontProxyPki) => ({ cert: pki.clientCert, key: pki.clientKey });
      let crossReads = 0;
      for (const [i, c] of extra.entries()) {
        let list = await as(front(c.pki), `${G}/pods`);
        await waitFor(
          async () => (list = await as(front(c.pki), `${G}/pods`)).status === 200,
          `${c.name} to be answered`,
        );
        expect(cpus(list.text), c.name).to.deep.equal([`default/web=${300 + i}m`]);
        // Every other cluster's pods, and those planted for it elsewhere, by name: not found.
        for (const p of pods.filter((p) => p.hostNamespace !== `vc-${c.name}` || p.cluster !== c.name)) {
          const one = await as(front(c.pki), `${G}/namespaces/${p.namespace}/pods/${p.name}`);
          if (one.status === 200 && !JSON.parse(one.text).containers[0].usage.cpu.startsWith(`${300 + i}`))
            crossReads++;
        }
        expect((await as(clientOf(c.pki, "intruder"), `${G}/pods`)).status, `${c.name}: another name`).to.equal(401);
        expect((await as(front(c.pki), `${G}/pods`, {})).status, `${c.name}: no user`).to.equal(401);
      }
      for (const v of [va(), vb()])
        for (const p of pods.filter((p) => p.hostNamespace?.startsWith("vc-m"))) {
          const one = await as(frontProxyOf(v), `${G}/namespaces/${p.namespace}/pods/${p.name}`, MASTER);
          if (one.status === 200 && /[36]\d\dm/.test(one.text)) crossReads++;
        }
      expect(crossReads, "reads of another cluster's pods").to.equal(0);
      // The two real clusters still read their own, among 22.
      expect(cpus((await as(frontProxyOf(vb()), `${G}/pods`, MASTER)).text)).to.deep.equal([
        "default/api=22m",
        "default/web=21m",
      ]);
      expect(hostNameOf(PODS[0]!)).to.equal("web-x-default-x-a");
    },
  );

  it(
    "publishes its status in vc-system's ConfigMap as its own " + "ServiceAccount: every cluster loaded, none failing",
    async () => {
      let status: ReturnType<typeof parseReplicaStatus>;
      await waitFor(async () => {
        const cm = await host().request<{ data?: Record<string, string> }>(
          "GET",
          "/api/v1/namespaces/vc-system/configmaps/vc-metrics-proxy-status",
        );
        status = parseReplicaStatus(cm.body.data?.["e2e-0"]);
        return status?.loaded === 22;
      }, "the status to show every cluster loaded");
      expect(status!.clusters).to.equal(22);
      expect(status!.failed).to.deep.equal({});
      // Only the proxy's own writes: of that ConfigMap.
      const writes = host()
        .writes("system:serviceaccount:vc-system:vc-metrics-proxy")
        .map((w) => `${w.verb} ${w.resource}/${w.namespace}/${w.name}`);
      expect([...new Set(writes)]).to.deep.equal(["patch configmaps/vc-system/vc-metrics-proxy-status"]);
    },
  );
});
