import { expect } from "chai";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { promisify } from "node:util";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { makeCerts } from "./certs.js";
import { addNode, addPod, proxyFor, startHost, tempFile, type KubeServer } from "./fixture.js";

const run = promisify(execFile);

/**
 * A kubeconfig whose server is the proxy, with a bearer token or a client certificate. Over HTTPS it trusts
 * the test CA (kubectl sends credentials only over TLS).
 */
function kubeconfigFor(proxy: RunningProxy, user: { token: string } | { cert: string; key: string }): string {
  const path = tempFile("kubeconfig", "");
  const ca = proxy.url.startsWith("https:") ? `, certificate-authority: "${makeCerts().caCert}"` : "";
  const creds =
    "token" in user ? `token: "${user.token}"` : `client-certificate: "${user.cert}", client-key: "${user.key}"`;
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "${proxy.url}"${ca}}}]
users: [{name: u, user: {${creds}}}]
contexts: [{name: virtual, context: {cluster: proxy, user: u, namespace: default}}]
current-context: virtual
`,
  );
  return path;
}

/** Runs the real kubectl (asynchronously: the proxy answers from this process). */
async function kubectl(
  kubeconfig: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8" });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err: any) {
    return { code: err.code ?? 1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
  }
}

/** Rows of a kubectl table without the header, columns split on runs of spaces. */
function rows(out: string): string[][] {
  return out
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/));
}

describe("metrics-proxy with the real kubectl", function () {
  this.timeout(60_000);
  let server: KubeServer;

  before(async () => {
    server = await startHost();
    await addNode(server, "node-1", "100m");
    await addNode(server, "node-2", "250m");
    await addNode(server, "node-9", "900m");
    await addPod(server, {
      cluster: "a",
      namespace: "default",
      name: "web",
      labels: { app: "web" },
      node: "node-1",
      cpu: "11m",
      memory: "20Mi",
    });
    await addPod(server, {
      cluster: "a",
      namespace: "default",
      name: "db",
      labels: { app: "db" },
      node: "node-2",
      cpu: "12m",
      memory: "30Mi",
    });
    await addPod(server, {
      cluster: "a",
      namespace: "team",
      name: "web",
      labels: { app: "web" },
      node: "node-1",
      cpu: "13m",
    });
    await addPod(server, {
      cluster: "b",
      namespace: "default",
      name: "web",
      labels: { app: "web" },
      node: "node-9",
      cpu: "99m",
    });
    await addPod(server, { cluster: "b", namespace: "default", name: "other", node: "node-9", cpu: "98m" });
  });

  after(async () => {
    await server?.close();
  });

  describe("kubectl top against --api-group metrics.k8s.io", () => {
    let proxy: RunningProxy;
    let kc: string;
    before(async () => {
      const c = makeCerts();
      const tls = ["--tls-cert", c.serverCert, "--tls-key", c.serverKey, "--client-ca", c.caCert];
      proxy = await proxyFor(server, "a", [
        "--api-group",
        "metrics.k8s.io",
        "--token-file",
        tempFile("tokens", "t0ken\n"),
        ...tls,
      ]);
      kc = kubeconfigFor(proxy, { token: "t0ken" });
    });
    after(async () => {
      server.setMetricsAvailable(true);
      await proxy?.close();
    });

    it(
      "kubectl top pod shows the virtual pods of a namespace, of all namespaces, by name and by set-based " +
        "selector",
      async () => {
        const ns = await kubectl(kc, "top", "pod");
        expect(ns.code, ns.stderr).to.equal(0);
        expect(rows(ns.stdout)).to.deep.equal([
          ["db", "12m", "30Mi"],
          ["web", "11m", "20Mi"],
        ]);
        const all = await kubectl(kc, "top", "pod", "-A");
        expect(rows(all.stdout).map((r) => `${r[0]}/${r[1]}/${r[2]}`)).to.deep.equal([
          "default/db/12m",
          "default/web/11m",
          "team/web/13m",
        ]);
        const one = await kubectl(kc, "top", "pod", "web", "-n", "team");
        expect(rows(one.stdout)).to.deep.equal([["web", "13m", "1Mi"]]);
        const sel = await kubectl(kc, "top", "pod", "-A", "-l", "app in (web)");
        expect(rows(sel.stdout).map((r) => `${r[0]}/${r[1]}`)).to.deep.equal(["default/web", "team/web"]);
      },
    );

    it(
      "kubectl asks /api and /apis for aggregated discovery and reads it: no per-version request, every metrics " +
        "resource listed",
      async () => {
        const cacheDir = `${tempFile("kubectl-cache-marker", "")}.d`; // a fresh cache: every document is fetched
        const res = await kubectl(kc, "api-resources", "-o", "wide", "--cache-dir", cacheDir, "-v=8");
        expect(res.code, res.stderr).to.equal(0);
        // kubectl's -v=8 trace: the URLs it asked, the Accept it sent and the Content-Type it got.
        const asked = [...res.stderr.matchAll(/\bGET https?:\/\/[^/\s]+(\/[^?\s]*)/g)].map((m) => m[1]);
        expect(asked, "discovery came whole from /api and /apis").to.deep.equal(["/api", "/apis"]);
        const header = (name: string) =>
          [...res.stderr.matchAll(new RegExp(`^\\S+ +\\S+ +\\d+ \\S+\\] +${name}: (.*)$`, "gm"))].map((m) =>
            m[1]!.trim(),
          );
        expect(header("Accept")[0]).to.match(
          /^application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList,/,
        );
        expect(header("Content-Type")).to.deep.equal(
          Array(2).fill("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        );
        const listed = res.stdout
          .trim()
          .split("\n")
          .slice(1)
          .map((l) => l.trim().split(/\s+/).join(" "));
        expect(listed).to.deep.equal([
          "nodes no v1 false Node get,list",
          "pods po v1 true Pod get,list",
          "nodes metrics.k8s.io/v1beta1 false NodeMetrics get,list",
          "pods metrics.k8s.io/v1beta1 true PodMetrics get,list",
        ]);
      },
    );

    it(
      "kubectl top pod says NotFound for another tenant's pod and 'No resources found' for an empty " + "namespace",
      async () => {
        const other = await kubectl(kc, "top", "pod", "other");
        expect(other.code).to.not.equal(0);
        expect(other.stderr).to.contain("NotFound").and.to.contain('podmetrics.metrics.k8s.io "other" not found');
        const empty = await kubectl(kc, "top", "pod", "-n", "nothing-here");
        expect(empty.code, empty.stderr).to.equal(0);
        expect(empty.stderr).to.contain("No resources found in nothing-here namespace.");
      },
    );

    it("kubectl top node shows only the synced nodes, with percentages from their capacity", async () => {
      const res = await kubectl(kc, "top", "node");
      expect(res.code, res.stderr).to.equal(0);
      expect(rows(res.stdout)).to.deep.equal([
        ["node-1", "100m", "2%", "1024Mi", "12%"],
        ["node-2", "250m", "6%", "1024Mi", "12%"],
      ]);
      const hidden = await kubectl(kc, "top", "node", "node-9");
      expect(hidden.code).to.not.equal(0);
      expect(hidden.stderr).to.contain("NotFound");
    });

    it(
      "kubectl reports 'metrics not available' while the host metrics API is down, and 401 with a " + "wrong token",
      async () => {
        server.setMetricsAvailable(false);
        proxy.cache.clear();
        const down = await kubectl(kc, "top", "pod");
        server.setMetricsAvailable(true);
        expect(down.code).to.not.equal(0);
        expect(down.stderr).to.contain("metrics not available");
        const bad = await kubectl(kubeconfigFor(proxy, { token: "wrong" }), "top", "pod");
        expect(bad.code).to.not.equal(0);
        expect(bad.stderr).to.match(/Unauthorized|must be logged in/);
      },
    );

    it(
      "kubectl authenticates with a client certificate signed by --client-ca; one from another CA is " + "refused",
      async () => {
        const c = makeCerts();
        const ok = await kubectl(kubeconfigFor(proxy, { cert: c.clientCert, key: c.clientKey }), "top", "pod", "web");
        expect(ok.code, ok.stderr).to.equal(0);
        expect(rows(ok.stdout)).to.deep.equal([["web", "11m", "20Mi"]]);
        const stranger = await kubectl(
          kubeconfigFor(proxy, { cert: c.strangerCert, key: c.strangerKey }),
          "top",
          "pod",
        );
        expect(stranger.code).to.not.equal(0);
        expect(stranger.stderr).to.match(/Unauthorized|must be logged in/);
      },
    );
  });

  describe("kubectl get --raw on every endpoint", () => {
    let proxy: RunningProxy;
    let kc: string;
    before(async () => {
      proxy = await proxyFor(server, "a");
      kc = kubeconfigFor(proxy, { token: "unused" });
    });
    after(async () => {
      await proxy?.close();
    });

    const G = "/apis/metrics.orch.io/v1beta1";
    const cases: Array<[string, (body: any) => void]> = [
      ["/api", (b) => expect(b).to.include({ kind: "APIVersions" })],
      ["/api/v1", (b) => expect(b.resources.map((r: any) => r.name)).to.deep.equal(["nodes", "pods"])],
      ["/apis", (b) => expect(b.groups.map((g: any) => g.name)).to.deep.equal(["metrics.orch.io"])],
      ["/apis/metrics.orch.io", (b) => expect(b.preferredVersion.groupVersion).to.equal("metrics.orch.io/v1beta1")],
      [
        G,
        (b) =>
          expect(b.resources.map((r: any) => `${r.name}:${r.kind}:${r.namespaced}:${r.verbs.join("+")}`)).to.deep.equal(
            ["nodes:NodeMetrics:false:get+list", "pods:PodMetrics:true:get+list"],
          ),
      ],
      [
        `${G}/pods`,
        (b) =>
          expect(b.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).to.deep.equal([
            "default/db",
            "default/web",
            "team/web",
          ]),
      ],
      [`${G}/namespaces/team/pods`, (b) => expect(b.items).to.have.length(1)],
      [
        `${G}/namespaces/default/pods/web`,
        (b) => expect(b.containers[0].usage).to.deep.equal({ cpu: "11m", memory: "20Mi" }),
      ],
      [
        `${G}/pods?labelSelector=app%20notin%20(web)`,
        (b) => expect(b.items.map((i: any) => i.metadata.name)).to.deep.equal(["db"]),
      ],
      [`${G}/nodes`, (b) => expect(b.items.map((i: any) => i.metadata.name)).to.deep.equal(["node-1", "node-2"])],
      [`${G}/nodes/node-2`, (b) => expect(b.usage.cpu).to.equal("250m")],
      ["/version", (b) => expect(b.major).to.equal("1")],
      [
        "/api/v1/nodes",
        (b) =>
          expect(b.items.map((i: any) => `${i.metadata.name}:${i.status.allocatable.cpu}`)).to.deep.equal([
            "node-1:4",
            "node-2:4",
          ]),
      ],
      ["/api/v1/nodes/node-1", (b) => expect(b.kind).to.equal("Node")],
      [
        "/api/v1/pods",
        (b) =>
          expect(b.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).to.deep.equal([
            "default/db",
            "default/web",
            "team/web",
          ]),
      ],
      [
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb",
        (b) => expect(b.items.map((i: any) => i.metadata.name)).to.deep.equal(["web"]),
      ],
      ["/api/v1/namespaces/team/pods/web", (b) => expect(b.metadata).to.include({ name: "web", namespace: "team" })],
    ];
    for (const [path, check] of cases) {
      it(`GET ${path}`, async () => {
        const res = await kubectl(kc, "get", "--raw", path);
        expect(res.code, res.stderr).to.equal(0);
        check(JSON.parse(res.stdout));
      });
    }

    it("kubectl get podmetrics / nodemetrics prints the server's CPU, memory and window columns", async () => {
      const pods = await kubectl(kc, "get", "podmetrics.metrics.orch.io", "-A");
      expect(pods.code, pods.stderr).to.equal(0);
      expect(rows(pods.stdout)).to.deep.equal([
        ["default", "db", "12m", "30Mi", "30s"],
        ["default", "web", "11m", "20Mi", "30s"],
        ["team", "web", "13m", "1Mi", "30s"],
      ]);
      const nodes = await kubectl(kc, "get", "nodemetrics.metrics.orch.io");
      expect(rows(nodes.stdout)).to.deep.equal([
        ["node-1", "100m", "1Gi", "30s"],
        ["node-2", "250m", "1Gi", "30s"],
      ]);
    });

    it("GET /healthz, /readyz and /metrics", async () => {
      expect((await kubectl(kc, "get", "--raw", "/healthz")).stdout).to.equal("ok");
      expect((await kubectl(kc, "get", "--raw", "/readyz")).stdout).to.equal("ok");
      expect((await kubectl(kc, "get", "--raw", "/metrics")).stdout).to.contain(
        "# TYPE apiserver_request_duration_seconds histogram",
      );
    });

    it("GET of another tenant's pod is NotFound", async () => {
      const res = await kubectl(kc, "get", "--raw", `${G}/namespaces/default/pods/other`);
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.contain("NotFound");
    });
  });
});
