// The metrics proxy in its deployed form, between two real API servers: the host (pods and the host's metrics API) and
// a second one playing the virtual cluster. The virtual server registers the proxy as its aggregated metrics API with
// the objects vc renders (an ExternalName Service and an APIService without caBundle); the proxy reads the virtual
// server's front-proxy CA, writes its own CA into the APIService, authenticates the front proxy, takes the user from
// its headers and authorizes the user with SubjectAccessReviews of the virtual server. Clients reach the proxy only
// through the virtual server: `kubectl get --raw` and `kubectl top pod` there answer with the tenant's translated
// metrics.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { silentLogger } from "../../src/model/log.js";
import { VIRTUAL_SERVICE_NAME } from "../../src/render/metricsProxy.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { HOST_NS } from "../metrics-proxy/fixture.js";
import { installHostMetrics, metricsBackend } from "./metrics-backend.js";
import { clientPair, direct, KUBECTL_TOP_SERVICE, registerInVirtual, servingPair } from "./metrics-support.js";

describe("e2e: the metrics proxy as an authenticated aggregated API server of a real virtual API server", function () {
  this.timeout(180_000);
  const host = useRealKube();
  const virtual = useRealKube({ users: [{ name: "viewer" }, { name: "nobody" }] });
  let dir: string;
  let backend: Server;
  let serving: { cert: string; key: string; ca: string };
  let proxy: RunningProxy | undefined;
  let topProxy: RunningProxy | undefined;

  const start = (apiGroup: string) =>
    startProxy(
      parseFlags([
        "--cluster",
        "a",
        "--host-namespace",
        HOST_NS,
        "--kubeconfig",
        host().kubeconfigPath,
        "--host-api-group",
        "metrics.k8s.io",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        serving.cert,
        "--tls-key",
        serving.key,
        "--tls-ca",
        serving.ca,
        "--virtual-kubeconfig",
        virtual().kubeconfigPath,
        "--api-group",
        apiGroup,
        "--refresh-interval",
        "1s",
      ]),
      { log: silentLogger, processMetrics: false, retryMs: 200, syncWaitMs: 5000 },
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-aggregation-"));
    backend = metricsBackend(dir);
    await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
    await installHostMetrics(host(), backend);
    serving = servingPair(dir, "serving");
    proxy = await start("metrics.orch.io");
    topProxy = await start("metrics.k8s.io");
    await registerInVirtual(virtual(), "metrics.orch.io", VIRTUAL_SERVICE_NAME, Number(new URL(proxy.url).port));
    await registerInVirtual(virtual(), "metrics.k8s.io", KUBECTL_TOP_SERVICE, Number(new URL(topProxy.url).port));
    // viewer may read pod metrics in "default" (both groups) and the pods kubectl top looks up; nobody may read
    // nothing.
    const role = await virtual().request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "metrics-viewer", namespace: "default" },
      rules: [{ apiGroups: ["", "metrics.orch.io", "metrics.k8s.io"], resources: ["pods"], verbs: ["get", "list"] }],
    });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    expect(
      (
        await virtual().kubectl([
          "-n",
          "default",
          "create",
          "rolebinding",
          "metrics-viewer",
          "--role=metrics-viewer",
          "--user=viewer",
        ])
      ).code,
    ).to.equal(0);
  });
  after(async () => {
    await proxy?.close();
    await topProxy?.close();
    await new Promise((r) => backend?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rawPods = (as?: string) =>
    virtual().kubectl(["get", "--raw", "/apis/metrics.orch.io/v1beta1/namespaces/default/pods"], as ? { as } : {});

  it("the proxy writes its CA into the virtual cluster's APIService, which then reports it Available", async () => {
    const wanted = `${readFileSync(serving.ca, "utf8").trim()}\n`;
    await waitFor(
      async () => {
        const res = await virtual().request<{
          spec: { caBundle?: string };
          status?: { conditions?: Array<{ type: string; status: string }> };
        }>("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.orch.io");
        return (
          Buffer.from(res.body.spec.caBundle ?? "", "base64").toString("utf8") === wanted &&
          res.body.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") === true
        );
      },
      "the APIService to carry the proxy's CA and be Available",
      60_000,
    );
    expect(proxy!.virtual!.caBundleWrites).to.equal(1);
    expect(proxy!.virtual!.requestHeader?.allowedNames).to.deep.equal(["front-proxy-client"]);
  });

  it("kubectl get --raw through the virtual API server answers the tenant's translated pod metrics", async () => {
    let res = await rawPods();
    await waitFor(
      async () => (res = await rawPods()).code === 0,
      "the metrics API to answer through the virtual API server",
      60_000,
    );
    const list = JSON.parse(res.stdout) as {
      items: Array<{ metadata: { name: string; namespace: string }; containers: Array<{ usage: { cpu: string } }> }>;
    };
    expect(
      list.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0]!.usage.cpu}`).sort(),
    ).to.deep.equal(["default/db=12m", "default/web=11m"]);
    expect(res.stdout).to.not.include("vc.orch.io").and.not.include("21m").and.not.include("99m");
  });

  it(
    "kubectl top pod in the virtual cluster shows the tenant's pods through the proxy serving " + "metrics.k8s.io",
    async () => {
      let top = await virtual().kubectl(["top", "pod", "-n", "default", "--no-headers"]);
      await waitFor(
        async () => (top = await virtual().kubectl(["top", "pod", "-n", "default", "--no-headers"])).code === 0,
        "kubectl top pod to answer",
        60_000,
      );
      const rows = top.stdout
        .trim()
        .split("\n")
        .map((l) => l.trim().split(/\s+/).slice(0, 2).join(" "))
        .sort();
      expect(rows).to.deep.equal(["db 12m", "web 11m"]);
    },
  );

  it(
    "every user is authorized by the virtual API server: a viewer reads, nobody is refused (403), answers " +
      "are cached",
    async () => {
      const viewer = await rawPods("viewer");
      expect(viewer.code, viewer.stderr).to.equal(0);
      expect(JSON.parse(viewer.stdout).items).to.have.length(2);
      const nobody = await rawPods("nobody");
      expect(nobody.code).to.not.equal(0);
      expect(nobody.stderr).to.match(/forbidden/i);

      // Straight to the proxy as the virtual API server's front proxy: the proxy's own SubjectAccessReview decides.
      const frontProxy = { cert: virtual().pki.frontProxyClientCert, key: virtual().pki.frontProxyClientKey };
      const path = "/apis/metrics.orch.io/v1beta1/namespaces/default/pods";
      const asNobody = await direct(proxy!, path, serving.ca, frontProxy, { "X-Remote-User": "nobody" });
      expect(asNobody.status, asNobody.text).to.equal(403);
      expect(JSON.parse(asNobody.text).message).to.include(
        'User "nobody" cannot list resource "pods" in API group "metrics.orch.io" in the namespace "default"',
      );
      // The viewer is the same user as the aggregator's (system:authenticated is added to both), whose answer may be
      // cached.
      const asViewer = await direct(proxy!, path, serving.ca, frontProxy, { "X-Remote-User": "viewer" });
      expect(asViewer.status, asViewer.text).to.equal(200);
      const reviews = proxy!.reviewer!.reviews;
      const again = await direct(proxy!, path, serving.ca, frontProxy, { "X-Remote-User": "viewer" });
      expect(again.status).to.equal(200);
      expect(proxy!.reviewer!.reviews - reviews, "the second identical request is decided from the cache").to.equal(0);
      const otherNamespace = await direct(
        proxy!,
        "/apis/metrics.orch.io/v1beta1/namespaces/team/pods",
        serving.ca,
        frontProxy,
        { "X-Remote-User": "viewer" },
      );
      expect(otherNamespace.status).to.equal(403);
    },
  );

  it(
    "answers a current aggregator's discovery requests as it makes them: aggregated /apis, and its group-less " +
      "legacy fallback",
    async () => {
      // What the aggregator of 1.30+ sends (handler_discovery.go): /apis as system:kube-aggregator in system:masters
      // asking for aggregated discovery; when the answer is not aggregated, /apis/<g>/<v> as system:kube-aggregator
      // with no group. The 1.20 aggregator here sends neither, so both are sent straight to the proxy as its front
      // proxy.
      const frontProxy = { cert: virtual().pki.frontProxyClientCert, key: virtual().pki.frontProxyClientKey };
      const accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
      const apis = await direct(topProxy!, "/apis", serving.ca, frontProxy, {
        "X-Remote-User": "system:kube-aggregator",
        "X-Remote-Group": "system:masters",
        Accept: accept,
      });
      expect(apis.status, apis.text).to.equal(200);
      const list = JSON.parse(apis.text) as {
        apiVersion: string;
        items: Array<{
          metadata: { name: string };
          versions: Array<{
            version: string;
            freshness: string;
            resources: Array<{ resource: string; responseKind: { kind: string } }>;
          }>;
        }>;
      };
      expect(list.apiVersion).to.equal("apidiscovery.k8s.io/v2");
      const v = list.items
        .find((g) => g.metadata.name === "metrics.k8s.io")!
        .versions.find((x) => x.version === "v1beta1")!;
      expect(v.freshness).to.equal("Current");
      expect(v.resources.map((r) => `${r.resource}:${r.responseKind.kind}`)).to.deep.equal([
        "nodes:NodeMetrics",
        "pods:PodMetrics",
      ]);
      // The fallback: no group header at all. The real RBAC grants discovery paths to system:authenticated only.
      const legacy = await direct(topProxy!, "/apis/metrics.k8s.io/v1beta1", serving.ca, frontProxy, {
        "X-Remote-User": "system:kube-aggregator",
        Accept: "application/json",
      });
      expect(legacy.status, legacy.text).to.equal(200);
      expect(JSON.parse(legacy.text).kind).to.equal("APIResourceList");
    },
  );

  it(
    "a request without the front proxy's verified certificate gets 401: none, another CA's, a name not allowed, " +
      "no user",
    async () => {
      const path = "/apis/metrics.orch.io/v1beta1/namespaces/default/pods";
      const pki = join(virtual().dir, "pki");
      const stranger = clientPair(dir, "stranger", "front-proxy-client", serving.ca, join(dir, "serving-ca.key"));
      const wrongName = clientPair(
        dir,
        "wrong-name",
        "intruder",
        virtual().pki.frontProxyCaCert,
        join(pki, "front-proxy-ca.key"),
      );
      const frontProxy = { cert: virtual().pki.frontProxyClientCert, key: virtual().pki.frontProxyClientKey };
      const cases: Array<[string, { cert: string; key: string } | undefined, Record<string, string>]> = [
        ["no certificate", undefined, { "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" }],
        ["another CA", stranger, { "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" }],
        ["a name not allowed", wrongName, { "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" }],
        ["no user header", frontProxy, {}],
      ];
      for (const [what, client, headers] of cases) {
        const res = await direct(proxy!, path, serving.ca, client, headers);
        expect(res.status, `${what}: ${res.text}`).to.equal(401);
        expect(res.text, what).to.not.include("web");
      }
      const bearer = await direct(proxy!, path, serving.ca, undefined, {
        Authorization: `Bearer ${virtual().adminToken}`,
      });
      expect(bearer.status, "a token, even the virtual cluster admin's, is not how the proxy is reached").to.equal(401);
      expect((await direct(proxy!, "/healthz", serving.ca)).status, "probes stay open").to.equal(200);
    },
  );

  it(
    "authorizes what it serves: an encoded resource name is reviewed as that resource (403), ambiguous paths " +
      "get 400",
    async () => {
      const frontProxy = { cert: virtual().pki.frontProxyClientCert, key: virtual().pki.frontProxyClientKey };
      // nobody is authenticated: system:discovery lets it GET the non-resource paths /apis/*, never pod metrics.
      const asNobody = { "X-Remote-User": "nobody", "X-Remote-Group": "system:authenticated" };
      for (const path of [
        "/apis/metrics.orch.io/v1beta1/namespaces/default/p%6Fds",
        "/apis/metrics.orch.io/v1beta1/namespaces/default/%70ods/",
        "/apis/metrics.orch.io/v1beta1/p%6fds",
      ]) {
        const res = await direct(proxy!, path, serving.ca, frontProxy, asNobody);
        expect(res.status, `${path}: ${res.text}`).to.equal(403);
        expect(JSON.parse(res.text).message, path).to.match(
          /cannot list resource "pods" in API group "metrics.orch.io"/,
        );
      }
      for (const path of [
        "/apis/metrics.orch.io/v1beta1/namespaces%2Fdefault/pods",
        "/apis/metrics.orch.io/v1beta1/nodes/%2e%2e/pods",
        "/apis/metrics.orch.io//v1beta1/pods",
      ]) {
        const res = await direct(proxy!, path, serving.ca, frontProxy, asNobody);
        expect(res.status, `${path}: ${res.text}`).to.equal(400);
      }
      // The discovery document itself is still a non-resource path nobody may read.
      expect((await direct(proxy!, "/apis/metrics.orch.io/v1beta1", serving.ca, frontProxy, asNobody)).status).to.equal(
        200,
      );
    },
  );

  it(
    "while the virtual API server does not answer, an undecided request gets 503 with Retry-After, never 403; " +
      "then it decides again",
    async () => {
      const frontProxy = { cert: virtual().pki.frontProxyClientCert, key: virtual().pki.frontProxyClientKey };
      const path = "/apis/metrics.orch.io/v1beta1/namespaces/default/pods";
      const slow = await startProxy(
        parseFlags([
          "--cluster",
          "a",
          "--host-namespace",
          HOST_NS,
          "--kubeconfig",
          host().kubeconfigPath,
          "--host-api-group",
          "metrics.k8s.io",
          "--listen",
          "127.0.0.1:0",
          "--tls-cert",
          serving.cert,
          "--tls-key",
          serving.key,
          "--tls-ca",
          serving.ca,
          "--virtual-kubeconfig",
          virtual().kubeconfigPath,
          "--api-group",
          "metrics.orch.io",
          "--apiservice",
          "",
          "--authz-timeout",
          "1s",
          "--authz-max-in-flight",
          "2",
          "--authz-max-queued",
          "2",
        ]),
        { log: silentLogger, processMetrics: false, retryMs: 200, syncWaitMs: 5000 },
      );
      try {
        await waitFor(
          async () => (await direct(slow, path, serving.ca, frontProxy, { "X-Remote-User": "viewer" })).status === 200,
          "the new proxy to serve",
        );
        virtual().freeze();
        try {
          // Users never seen before: no cached decision; more of them than may be sent and queued.
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              direct(slow, path, serving.ca, frontProxy, { "X-Remote-User": `stalled-${i}` }),
            ),
          );
          expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(503));
          expect(JSON.parse(answers[0]!.text)).to.include({ reason: "ServiceUnavailable", code: 503 });
        } finally {
          virtual().thaw();
        }
        const res = await direct(slow, path, serving.ca, frontProxy, { "X-Remote-User": "nobody" });
        expect(res.status, res.text).to.equal(403);
        expect(
          (
            await direct(slow, path, serving.ca, frontProxy, {
              "X-Remote-User": "viewer",
              "X-Remote-Group": "system:authenticated",
            })
          ).status,
        ).to.equal(200);
      } finally {
        await slow.close();
      }
    },
  );

  it(
    "a rotated serving certificate is picked up and its new CA written to the APIService, without a " + "restart",
    async () => {
      const next = servingPair(dir, "rotated");
      writeFileSync(serving.key, readFileSync(next.key));
      writeFileSync(serving.cert, readFileSync(next.cert));
      writeFileSync(serving.ca, readFileSync(next.ca));
      const wanted = `${readFileSync(next.ca, "utf8").trim()}\n`;
      await waitFor(
        async () => {
          const res = await virtual().request<{ spec: { caBundle?: string } }>(
            "GET",
            "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.orch.io",
          );
          return Buffer.from(res.body.spec.caBundle ?? "", "base64").toString("utf8") === wanted;
        },
        "the APIService to carry the rotated CA",
        30_000,
      );
      let res = await rawPods();
      await waitFor(
        async () => (res = await rawPods()).code === 0,
        "the metrics API to answer with the rotated certificate",
        60_000,
      );
      expect(JSON.parse(res.stdout).items).to.have.length(2);
    },
  );
});
