// The shared proxy: one process for every cluster of the host, each caller's cluster the one whose front-proxy CA
// signed its certificate. Cross-tenant reads, bad credentials, a CA two clusters publish, clusters coming and going,
// and the status it publishes for the hand-over from a cluster's own proxy.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { parseReplicaStatus } from "../../src/model/proxy-status.js";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { LABELS } from "../../src/translate/keys.js";
import { clientOf, frontProxyPki, makeCerts } from "./certs.js";
import { addPod, eventually, names, startHost, type KubeServer } from "./fixture.js";
import {
  addCluster,
  asFrontProxy,
  clusterNamespace,
  frontProxyOf,
  kubeconfigSecret,
  kubeconfigWith,
  sharedProxy,
  type TestCluster,
} from "./shared-fixture.js";

const G = "/apis/metrics.orch.io/v1beta1";

describe("metrics-proxy: one shared proxy for the host's clusters", function () {
  this.timeout(60_000);
  let host: KubeServer;
  let a: TestCluster;
  let b: TestCluster;
  let proxy: RunningProxy;
  const extra: TestCluster[] = [];

  before(async () => {
    host = await startHost();
    await host.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-system" } } as never);
    a = await addCluster(host, "a");
    b = await addCluster(host, "b");
    // Both clusters have default/web; the cpu figure tells whose answer it is.
    await addPod(host, { cluster: "a", namespace: "default", name: "web", cpu: "11m", hostNamespace: a.hostNamespace });
    await addPod(host, { cluster: "a", namespace: "only-a", name: "x", cpu: "12m", hostNamespace: a.hostNamespace });
    await addPod(host, { cluster: "b", namespace: "default", name: "web", cpu: "21m", hostNamespace: b.hostNamespace });
    await addPod(host, { cluster: "b", namespace: "only-b", name: "y", cpu: "22m", hostNamespace: b.hostNamespace });
    // a's syncer plants a pod in a's namespace labelled as b's: b never sees it.
    await addPod(host, {
      cluster: "b",
      namespace: "only-b",
      name: "forged",
      cpu: "99m",
      hostNamespace: a.hostNamespace,
    });
    proxy = await sharedProxy(host);
    await eventually(async () => (await asFrontProxy(proxy, "/readyz", undefined)).status === 200);
    expect(proxy.registry!.counts).to.deep.equal({ clusters: 2, loaded: 2 });
  });
  after(async () => {
    await proxy?.close();
    for (const c of [a, b, ...extra]) await c?.virtual.close();
    await host?.close();
  });

  const cpus = (body: { items: Array<{ containers: Array<{ usage: { cpu: string } }> }> }) =>
    body.items.map((i) => i.containers[0]!.usage.cpu);

  it("answers each cluster's front proxy with that cluster's pods only", async () => {
    const asA = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(a));
    expect(asA.status, asA.text).to.equal(200);
    expect(names(asA.body)).to.deep.equal(["default/web", "only-a/x"]);
    expect(cpus(asA.body)).to.deep.equal(["11m", "12m"]);
    const asB = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(b));
    expect(names(asB.body)).to.deep.equal(["default/web", "only-b/y"]);
    expect(cpus(asB.body)).to.deep.equal(["21m", "22m"]);
    expect(asB.text).to.not.include("99m");
    // One pod, read on its own: a's web for a, b's for b; another cluster's name is not found.
    expect(
      (await asFrontProxy(proxy, `${G}/namespaces/default/pods/web`, frontProxyOf(a))).body.containers[0].usage.cpu,
    ).to.equal("11m");
    expect(
      (await asFrontProxy(proxy, `${G}/namespaces/default/pods/web`, frontProxyOf(b))).body.containers[0].usage.cpu,
    ).to.equal("21m");
    expect((await asFrontProxy(proxy, `${G}/namespaces/only-b/pods/y`, frontProxyOf(a))).status).to.equal(404);
    expect((await asFrontProxy(proxy, `${G}/namespaces/only-b/pods/forged`, frontProxyOf(b))).status).to.equal(404);
  });

  it("authorizes each user with the cluster's own API server", async () => {
    const nobody = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(a), { "X-Remote-User": "nobody" });
    expect(nobody.status).to.equal(403);
    const before = a.virtual.countRequests({ resource: "subjectaccessreviews" });
    const otherBefore = b.virtual.countRequests({ resource: "subjectaccessreviews" });
    await asFrontProxy(proxy, `${G}/namespaces/only-a/pods`, frontProxyOf(a), { "X-Remote-User": "someone" });
    expect(a.virtual.countRequests({ resource: "subjectaccessreviews" }) - before).to.equal(1);
    expect(b.virtual.countRequests({ resource: "subjectaccessreviews" }) - otherBefore).to.equal(0);
  });

  it("answers every bad credential 401, without a byte of any cluster's metrics", async () => {
    const stranger = frontProxyPki();
    const cases: Array<[string, { cert: string; key: string } | undefined, Record<string, string>]> = [
      ["no certificate", undefined, { "X-Remote-User": "viewer", "X-Remote-Group": "system:masters" }],
      ["a CA no cluster publishes", frontProxyOf({ ...a, pki: stranger }), { "X-Remote-User": "viewer" }],
      ["a name the cluster does not allow", clientOf(a.pki, "intruder"), { "X-Remote-User": "viewer" }],
      ["no user header", frontProxyOf(a), {}],
      ["a bearer token", undefined, { Authorization: "Bearer admin", "X-Remote-User": "viewer" }],
    ];
    for (const [what, client, headers] of cases) {
      const res = await asFrontProxy(proxy, `${G}/pods`, client, headers);
      expect(res.status, `${what}: ${res.text}`).to.equal(401);
      expect(res.text, what).to.not.match(/11m|21m|web/);
    }
  });

  it("a CA two clusters publish answers for neither (never one with the other's pods); each is told why", async () => {
    // c publishes a's CA (its certificate is no secret): a's front proxy must not be answered as c, nor c's as a.
    const c = await addCluster(host, "c", { pki: a.pki });
    extra.push(c);
    await eventually(() => proxy.registry!.counts.loaded === 3);
    const res = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(a));
    expect(res.status, res.text).to.equal(401);
    expect(proxy.registry!.report().failed).to.have.keys("vc-a/a", "vc-c/c");
    expect(proxy.registry!.report().failed["vc-a/a"]).to.match(/published by vc-c\/c too/);
    // b is unaffected; once c has a CA of its own, a is answered again.
    expect((await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(b))).status).to.equal(200);
    const own = frontProxyPki();
    c.virtual.put((await import("./shared-fixture.js")).authenticationConfigMap(own.caPem) as never);
    await eventually(async () => (await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(a))).status === 200);
    const asC = await asFrontProxy(proxy, `${G}/pods`, { cert: own.clientCert, key: own.clientKey });
    expect(asC.status, asC.text).to.equal(200);
    expect(asC.body.items).to.deep.equal([]);
  });

  it("a cluster whose Namespace loses its mark is no longer answered; one marked later is", async () => {
    host.put(clusterNamespace("b", b.hostNamespace) as never);
    const ns = host.get("v1", "Namespace", "", b.hostNamespace)!;
    delete ns.metadata.labels![LABELS.metricsProxy];
    host.put(ns);
    await eventually(async () => (await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(b))).status === 401);
    host.put(clusterNamespace("b", b.hostNamespace) as never);
    await eventually(async () => (await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(b))).status === 200);
  });

  it("a Secret rewritten with an exec plugin is refused without running it, and reported", async () => {
    const d = await addCluster(host, "d");
    extra.push(d);
    host.put(
      kubeconfigSecret(
        "d",
        d.hostNamespace,
        kubeconfigWith(d.virtual.url, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "touch" } }),
      ) as never,
    );
    await eventually(() => /user\.exec \(runs a program\)/.test(proxy.registry!.report().failed["vc-d/d"] ?? ""));
  });

  it("publishes what each replica answers for in the status ConfigMap", async () => {
    await eventually(() => {
      const cm = host.get("v1", "ConfigMap", "vc-system", "vc-metrics-proxy-status");
      const status = parseReplicaStatus((cm?.data as Record<string, string> | undefined)?.["proxy-0"]);
      return status !== undefined && status.loaded >= 3 && status.failed["vc-d/d"] !== undefined;
    });
    const cm = host.get("v1", "ConfigMap", "vc-system", "vc-metrics-proxy-status")!;
    const status = parseReplicaStatus((cm.data as Record<string, string>)["proxy-0"])!;
    expect(status.intervalSeconds).to.equal(1);
    expect(status.ready).to.deep.equal([]);
    expect(status.failed).to.have.property("vc-d/d");
  });
});

describe("metrics-proxy: the hand-over from a cluster's own proxy", function () {
  this.timeout(60_000);
  let host: KubeServer;
  let e: TestCluster;
  let proxy: RunningProxy;
  const OLD_CA = frontProxyPki("old-proxy-ca").caPem;

  const legacy = (args: string[], status: Record<string, number>) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "vc-metrics-proxy-e", namespace: "vc-e", generation: 2 },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "vc-metrics-proxy" } },
      template: {
        metadata: { labels: { app: "vc-metrics-proxy" } },
        spec: { containers: [{ name: "metrics-proxy", image: "proxy", args }] },
      },
    },
    status,
  });
  const bundle = () => {
    const api = e.virtual.get("apiregistration.k8s.io/v1", "APIService", "", "v1beta1.metrics.orch.io")!;
    return Buffer.from(String((api.spec as { caBundle?: string }).caBundle ?? ""), "base64").toString("utf8");
  };
  const status = () =>
    parseReplicaStatus(
      (host.get("v1", "ConfigMap", "vc-system", "vc-metrics-proxy-status")?.data as Record<string, string>)?.[
        "proxy-0"
      ],
    );

  before(async () => {
    host = await startHost();
    await host.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-system" } } as never);
    e = await addCluster(host, "e");
    // The cluster's own proxy wrote its CA into the APIService, and still manages it.
    const api = e.virtual.get("apiregistration.k8s.io/v1", "APIService", "", "v1beta1.metrics.orch.io")!;
    (api.spec as Record<string, unknown>).caBundle = Buffer.from(OLD_CA).toString("base64");
    e.virtual.put(api);
    host.put(legacy(["--cluster", "e"], { observedGeneration: 2, replicas: 1, updatedReplicas: 1 }) as never);
    proxy = await sharedProxy(host);
  });
  after(async () => {
    await proxy?.close();
    await e?.virtual.close();
    await host?.close();
  });

  it("adds its CA beside the old one and waits while the old proxy still manages the caBundle", async () => {
    await eventually(() => status()?.waiting["vc-e/e"] !== undefined);
    expect(status()!.waiting["vc-e/e"]).to.match(/still manages the APIService's caBundle/);
    expect(status()!.ready).to.deep.equal([]);
    const now = bundle();
    expect(now).to.include(OLD_CA.trim());
    expect(now).to.include(readFileSync(makeCerts().caCert, "utf8").trim());
  });

  it(
    'is ready once the old proxy runs with --apiservice "" and is ' +
      "rolled out; trusts only its own CA once it is gone",
    async () => {
      host.put(
        legacy(["--cluster", "e", "--apiservice", ""], {
          observedGeneration: 2,
          replicas: 2,
          updatedReplicas: 1,
        }) as never,
      );
      await eventually(() => /rolling out/.test(status()?.waiting["vc-e/e"] ?? ""));
      host.put(
        legacy(["--cluster", "e", "--apiservice", ""], {
          observedGeneration: 2,
          replicas: 1,
          updatedReplicas: 1,
        }) as never,
      );
      await eventually(() => status()?.ready.includes("vc-e/e") === true);
      expect(bundle()).to.include(OLD_CA.trim());
      host.remove("apps/v1", "Deployment", "vc-e", "vc-metrics-proxy-e");
      await eventually(() => !bundle().includes(OLD_CA.trim()));
      expect(bundle().trim()).to.equal(readFileSync(makeCerts().caCert, "utf8").trim());
      await eventually(() => status()?.ready.length === 0 && Object.keys(status()!.waiting).length === 0);
    },
  );
});
