import { expect } from "chai";
import https from "node:https";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { makeCerts, read } from "./certs.js";
import {
  addNode,
  addPod,
  eventually,
  get,
  HOST_NS,
  proxyFor,
  startHost,
  tempFile,
  type KubeServer,
} from "./fixture.js";

const G = "/apis/metrics.orch.io/v1beta1";

/** GET over HTTPS with the proxy's CA, optionally with a client certificate. */
function httpsGet(
  url: string,
  opts: { cert?: string; key?: string; token?: string } = {},
): Promise<{ status: number; body: any }> {
  const certs = makeCerts();
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        ca: read(certs.caCert),
        ...(opts.cert ? { cert: read(opts.cert), key: read(opts.key!) } : {}),
        headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {},
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: text.startsWith("{") ? JSON.parse(text) : text }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("metrics-proxy errors, cache, authentication and metrics", () => {
  let server: KubeServer;

  before(async () => {
    server = await startHost();
    await addNode(server, "node-1", "100m");
    await addPod(server, { cluster: "a", namespace: "default", name: "web", labels: { app: "web" }, cpu: "11m" });
    await addPod(server, { cluster: "a", namespace: "default", name: "db", labels: { app: "db" }, cpu: "12m" });
  });

  after(async () => {
    await server?.close();
  });

  describe("host failures", () => {
    let a: RunningProxy;
    before(async () => {
      a = await proxyFor(server, "a", ["--cache-ttl", "1ms"]);
    });
    after(async () => {
      server.setMetricsAvailable(true);
      await a?.close();
    });

    it("answers 503 'metrics not available' while the host metrics API is down, and recovers", async () => {
      server.setMetricsAvailable(false);
      for (const path of [`${G}/pods`, `${G}/namespaces/default/pods/web`, `${G}/nodes`, `${G}/nodes/node-1`]) {
        const res = await get(a, path);
        expect(res.status, path).to.equal(503);
        expect(res.body).to.include({ kind: "Status", reason: "ServiceUnavailable", code: 503 });
        expect(res.body.message).to.match(/^metrics not available/);
      }
      server.setMetricsAvailable(true);
      expect((await get(a, `${G}/namespaces/default/pods/web`)).status).to.equal(200);
    });

    it("answers 503 when the host metrics API answers 404 (not registered) or resets the connection", async () => {
      const notRegistered = server.faults.add({ path: `${G}/namespaces/${HOST_NS}/pods`, status: 404 });
      let res = await get(a, `${G}/pods`);
      notRegistered.remove();
      expect(res.status).to.equal(503);
      expect(res.body.message).to.contain("metrics not available").and.to.contain("not registered");
      const reset = server.faults.add({ path: `${G}/nodes`, reset: true });
      res = await get(a, `${G}/nodes`);
      reset.remove();
      expect(res.status).to.equal(503);
      expect(res.body.message).to.contain("metrics not available");
    });
  });

  describe("host permissions", () => {
    it("answers 403 naming the missing permission when the host refuses the metrics API", async () => {
      server.addUser("no-metrics", [
        { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"], namespaces: [HOST_NS] },
        { verbs: ["get", "list"], apiGroups: [""], resources: ["nodes"] },
      ]);
      const kubeconfig = server.writeKubeconfig({ token: "no-metrics" });
      const p = await proxyFor(server, "a", [], { kubeconfig });
      try {
        const pods = await get(p, `${G}/pods`);
        expect(pods.status).to.equal(403);
        expect(pods.body).to.include({ kind: "Status", reason: "Forbidden", code: 403 });
        expect(pods.body.message).to.contain(
          `list resource "pods" in API group "metrics.orch.io" in the namespace "${HOST_NS}"`,
        );
        const nodes = await get(p, `${G}/nodes`);
        expect(nodes.status).to.equal(403);
        expect(nodes.body.message).to.contain(
          'list resource "nodes" in API group "metrics.orch.io" at the cluster scope',
        );
      } finally {
        await p.close();
      }
    });

    it("answers 403 naming the pod permission when the host refuses to list pods, and is not ready", async () => {
      server.addUser("no-pods", [{ verbs: ["get", "list"], apiGroups: ["metrics.orch.io"], resources: ["*"] }]);
      const kubeconfig = server.writeKubeconfig({ token: "no-pods" });
      const p = await proxyFor(server, "a", [], { kubeconfig, wait: false });
      try {
        await eventually(() => p.informer.lastError !== undefined);
        const res = await get(p, `${G}/namespaces/default/pods/web`);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.contain(`list resource "pods" in API group "" in the namespace "${HOST_NS}"`);
        const ready = await get(p, "/readyz");
        expect(ready.status).to.equal(503);
        expect(ready.text).to.contain("pod index not synced");
      } finally {
        await p.close();
      }
    });

    it("keeps answering from LISTs when the host refuses to watch pods, and says so on /readyz", async () => {
      server.addUser("no-watch", [
        { verbs: ["get", "list"], apiGroups: [""], resources: ["pods"], namespaces: [HOST_NS] },
        { verbs: ["get", "list"], apiGroups: ["metrics.orch.io"], resources: ["*"] },
      ]);
      const p = await proxyFor(server, "a", [], { kubeconfig: server.writeKubeconfig({ token: "no-watch" }) });
      try {
        await eventually(() => p.informer.lastError !== undefined);
        expect((await get(p, `${G}/namespaces/default/pods/web`)).status).to.equal(200);
        const ready = await get(p, "/readyz");
        expect(ready.status).to.equal(503);
        expect(ready.text).to.contain(`watch resource "pods" in API group "" in the namespace "${HOST_NS}"`);
      } finally {
        await p.close();
      }
    });

    it("is ready only once the host answered", async () => {
      const p = await proxyFor(server, "a");
      try {
        expect((await get(p, "/readyz")).status).to.equal(200);
        expect((await get(p, "/healthz")).text).to.equal("ok");
      } finally {
        await p.close();
      }
    });
  });

  describe("cache", () => {
    it("answers from the cache within the TTL and shares concurrent misses in one host request", async () => {
      const p = await proxyFor(server, "a", ["--cache-ttl", "1h"]);
      const listPath = new RegExp(`^${G}/namespaces/${HOST_NS}/pods$`.replaceAll(".", "\\."));
      const podPath = new RegExp(`^${G}/namespaces/${HOST_NS}/pods/[^/]+$`.replaceAll(".", "\\."));
      try {
        const lists = server.countRequests({ path: listPath });
        const pods = server.countRequests({ path: podPath });
        // A single pod is read on its own (the host's per-pod path), concurrent reads of it sharing one request.
        const one = await Promise.all(Array.from({ length: 12 }, () => get(p, `${G}/namespaces/default/pods/web`)));
        expect(one.every((r) => r.status === 200)).to.equal(true);
        expect(server.countRequests({ path: podPath }) - pods).to.equal(1);
        expect(server.countRequests({ path: listPath }) - lists).to.equal(0);
        // Lists read the cluster's host namespace once, concurrent ones sharing it.
        const all = await Promise.all(Array.from({ length: 13 }, () => get(p, `${G}/pods`)));
        expect(all.every((r) => r.status === 200)).to.equal(true);
        expect(server.countRequests({ path: listPath }) - lists).to.equal(1);
        // While that list is cached, a single pod (another one too) comes from it: no host request.
        for (let i = 0; i < 5; i++) await get(p, `${G}/namespaces/default/pods`);
        expect((await get(p, `${G}/namespaces/default/pods/db`)).status).to.equal(200);
        expect(server.countRequests({ path: listPath }) - lists).to.equal(1);
        expect(server.countRequests({ path: podPath }) - pods).to.equal(1);
        const metrics = (await get(p, "/metrics")).text;
        const count = (cache: string, result: string) =>
          Number(
            new RegExp(`vc_metrics_proxy_cache_requests_total\\{cache="${cache}",result="${result}"\\} (\\d+)`).exec(
              metrics,
            )?.[1] ?? 0,
          );
        expect(count("pod", "miss")).to.equal(1);
        expect(count("pod", "hit") + count("pod", "shared")).to.equal(11);
        expect(count("pods", "miss")).to.equal(1);
        expect(count("pods", "hit") + count("pods", "shared")).to.equal(17);
        expect(count("pods", "hit")).to.be.at.least(5);
      } finally {
        await p.close();
      }
    });

    it("asks the host again once the TTL has passed; with a TTL of 0 every request asks it", async () => {
      const p = await proxyFor(server, "a", ["--cache-ttl", "1s"]);
      const hostPath = new RegExp(`^${G}/namespaces/${HOST_NS}/pods$`.replaceAll(".", "\\."));
      try {
        const before = server.countRequests({ path: hostPath });
        await get(p, `${G}/pods`);
        await get(p, `${G}/pods`);
        expect(server.countRequests({ path: hostPath }) - before).to.equal(1);
        await new Promise((r) => setTimeout(r, 1100));
        await get(p, `${G}/pods`);
        expect(server.countRequests({ path: hostPath }) - before).to.equal(2);
      } finally {
        await p.close();
      }
      const uncached = await proxyFor(server, "a", ["--cache-ttl", "0s"]);
      try {
        const before = server.countRequests({ path: hostPath });
        for (let i = 0; i < 3; i++) expect((await get(uncached, `${G}/pods`)).status).to.equal(200);
        expect(server.countRequests({ path: hostPath }) - before).to.equal(3);
        expect(uncached.cache.size).to.equal(0);
      } finally {
        await uncached.close();
      }
    });
  });

  describe("Prometheus metrics", () => {
    it("exports request durations by verb and resource, cache counts and host latency", async () => {
      const p = await proxyFor(server, "a");
      try {
        await get(p, `${G}/pods`);
        await get(p, `${G}/namespaces/default/pods/web`);
        await get(p, `${G}/nodes`);
        const res = await get(p, "/metrics");
        expect(res.status).to.equal(200);
        expect(res.text).to.contain(
          'apiserver_request_duration_seconds_count{verb="LIST",group="metrics.orch.io",resource="pods"} 1',
        );
        expect(res.text).to.contain(
          'apiserver_request_duration_seconds_count{verb="GET",group="metrics.orch.io",resource="pods"} 1',
        );
        expect(res.text).to.contain(
          'apiserver_request_duration_seconds_count{verb="LIST",group="metrics.orch.io",resource="nodes"} 1',
        );
        expect(res.text).to.contain(
          'apiserver_request_total{verb="GET",group="metrics.orch.io",resource="pods",code="200"} 1',
        );
        expect(res.text).to.match(
          /vc_metrics_proxy_host_request_duration_seconds_count\{resource="pods",code="200"\} [1-9]/,
        );
        expect(res.text).to.contain("vc_metrics_proxy_indexed_pods 2");
      } finally {
        await p.close();
      }
    });
  });

  describe("authentication", () => {
    it("is off without --client-ca and --token-file", async () => {
      const p = await proxyFor(server, "a");
      try {
        expect((await get(p, `${G}/pods`)).status).to.equal(200);
      } finally {
        await p.close();
      }
    });

    it("accepts listed bearer tokens only, with 401 Status otherwise; probes stay open", async () => {
      const tokens = tempFile(
        "tokens.csv",
        '# static tokens\nsecret-one,aggregator,1,"system:masters"\n\nsecret-two\n',
      );
      const p = await proxyFor(server, "a", ["--token-file", tokens]);
      try {
        for (const headers of [
          {} as Record<string, string>,
          { Authorization: "Bearer wrong" },
          { Authorization: "Basic c2VjcmV0LW9uZQ==" },
          { Authorization: "Bearer secret-one-and-more" },
        ]) {
          const res = await get(p, `${G}/pods`, headers);
          expect(res.status).to.equal(401);
          expect(res.body).to.deep.equal({
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message: "Unauthorized",
            reason: "Unauthorized",
            code: 401,
          });
        }
        expect((await get(p, "/apis", {})).status).to.equal(401);
        expect((await get(p, "/metrics", {})).status).to.equal(401);
        expect((await get(p, `${G}/pods`, { Authorization: "Bearer secret-one" })).status).to.equal(200);
        expect((await get(p, `${G}/pods`, { Authorization: "Bearer secret-two" })).status).to.equal(200);
        expect((await get(p, "/healthz")).status).to.equal(200);
        expect((await get(p, "/readyz")).status).to.equal(200);
      } finally {
        await p.close();
      }
    });

    it("serves HTTPS and accepts client certificates signed by --client-ca, alongside tokens", async () => {
      const c = makeCerts();
      const tokens = tempFile("tokens", "tok\n");
      const p = await proxyFor(server, "a", [
        "--tls-cert",
        c.serverCert,
        "--tls-key",
        c.serverKey,
        "--client-ca",
        c.caCert,
        "--token-file",
        tokens,
      ]);
      try {
        expect(p.url).to.match(/^https:/);
        expect((await httpsGet(`${p.url}${G}/pods`)).status).to.equal(401);
        expect((await httpsGet(`${p.url}${G}/pods`, { cert: c.strangerCert, key: c.strangerKey })).status).to.equal(
          401,
        );
        const ok = await httpsGet(`${p.url}${G}/pods`, { cert: c.clientCert, key: c.clientKey });
        expect(ok.status).to.equal(200);
        expect(ok.body.items).to.have.length(2);
        expect((await httpsGet(`${p.url}${G}/pods`, { token: "tok" })).status).to.equal(200);
      } finally {
        await p.close();
      }
    });
  });

  describe("bad requests", () => {
    it("answers unknown paths 404, writes 405 and watch 405, as Status bodies", async () => {
      const p = await proxyFor(server, "a");
      try {
        for (const path of [
          "/apis/metrics.k8s.io/v1beta1/pods",
          "/apis/metrics.orch.io/v1/pods",
          `${G}/namespaces/default/pods/web/extra`,
          "/nope",
          "/api/v2",
        ]) {
          const res = await get(p, path);
          expect(res.status, path).to.equal(404);
          expect(res.body.kind).to.equal("Status");
        }
        const post = await fetch(`${p.url}${G}/pods`, { method: "POST", body: "{}" });
        expect(post.status).to.equal(405);
        expect(((await post.json()) as any).reason).to.equal("MethodNotAllowed");
        expect((await get(p, `${G}/pods?watch=true`)).status).to.equal(405);
        expect((await get(p, `${G}/namespaces/%E0%A4%A/pods`)).status).to.equal(400);
      } finally {
        await p.close();
      }
    });
  });
});
