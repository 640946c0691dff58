// The hand-over of a running cluster from its own metrics proxy (the per-cluster Deployment of earlier releases) to the
// host's shared proxy, through vc apply, on a real host and a real virtual API server, with `kubectl top pod` asked in
// the virtual cluster all along: not one of them fails.
//
// No kubelet or DNS runs here, so the test plays them: each proxy pod is an in-process proxy with the Deployment's
// arguments (restarted when vc changes them, its status written as the Deployment controller would), and the virtual
// API server reaches the proxies through a TCP forwarder that follows the cluster's host Service
// vc-metrics-proxy-<cluster> as DNS would: a ClusterIP Service leads to the cluster's own proxy, the ExternalName to
// the shared one.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/host/client.js";
import { objectKey } from "../../src/kube/object.js";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { parseReplicaStatus } from "../../src/model/proxy-status.js";
import { silentLogger } from "../../src/model/log.js";
import { VIRTUAL_SERVICE_NAME } from "../../src/render/metricsProxy.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { LABELS } from "../../src/translate/keys.js";
import { runVc } from "../support/vc.js";
import { legacyMetricsProxy } from "../support/legacy-metrics-proxy.js";
import { useRealKube, waitFor } from "../support/real-kube.js";
import { installHostMetrics, metricsBackend, type BackendPod } from "./metrics-backend.js";
import { registerInVirtual, servingPair } from "./metrics-support.js";

const ROOT = join(import.meta.dirname, "..", "..");
const GROUP = "metrics.k8s.io";
const NS = "vc-a";
/** The source vc applies the repository as (its records are this source's). */
const OWNER = "e2e";
const OLD = "vc-metrics-proxy-a";
const PODS: BackendPod[] = [
  { cluster: "a", hostNamespace: NS, namespace: "default", name: "web", cpu: "11m" },
  { cluster: "a", hostNamespace: NS, namespace: "default", name: "db", cpu: "12m" },
];

describe(
  "e2e: a running cluster handed over from its own metrics " + "proxy to the shared one, kubectl top answering",
  function () {
    this.timeout(600_000);
    const host = useRealKube();
    const virtual = useRealKube();
    let dir: string;
    let repo: string;
    let backend: Server;
    let shared: RunningProxy | undefined;
    let own: RunningProxy | undefined;
    let forwarder: net.Server | undefined;
    let route: "own" | "shared" = "own";
    const routed = { own: 0, shared: 0 };
    const piped = new Set<net.Socket>();
    let watching: NodeJS.Timeout | undefined;
    let ownServing: { cert: string; key: string; ca: string };
    let sharedServing: { cert: string; key: string; ca: string };
    const tops: Array<{ at: number; code: number; out: string }> = [];
    let topping: Promise<void> | undefined;
    let stopTop = false;

    const vc = (...args: string[]) =>
      runVc([...args, "--target", "kube", "--kubeconfig", host().kubeconfigPath, "--owner", OWNER]);
    const live = async (path: string) => (await host().request<Record<string, any>>("GET", path)).body;
    /** The cluster's own proxy, as a pod of its Deployment runs it: the live Deployment's args, files mapped here. */
    const startOwn = async (): Promise<RunningProxy> => {
      const deployment = await live(`/apis/apps/v1/namespaces/${NS}/deployments/${OLD}`);
      const args = [...(deployment.spec.template.spec.containers[0].args as string[])];
      const set = (flag: string, value: string) => (args[args.indexOf(flag) + 1] = value);
      set("--listen", "127.0.0.1:0");
      set("--tls-cert", ownServing.cert);
      set("--tls-key", ownServing.key);
      set("--virtual-kubeconfig", join(dir, "virtual.kubeconfig"));
      set("--virtual-server", virtual().url);
      args.push("--kubeconfig", host().kubeconfigPath, "--tls-ca", ownServing.ca, "--refresh-interval", "1s");
      args.push("--api-group", GROUP, "--host-api-group", GROUP);
      return startProxy(parseFlags(args), { log: silentLogger, processMetrics: false, retryMs: 200 });
    };
    /** The Deployment's status as its controller writes it once its pods run the current template. */
    const rolledOut = async () => {
      const d = await live(`/apis/apps/v1/namespaces/${NS}/deployments/${OLD}`);
      const status = {
        observedGeneration: d.metadata.generation,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
      };
      const res = await host().request(
        "PATCH",
        `/apis/apps/v1/namespaces/${NS}/deployments/${OLD}/status`,
        { status },
        { contentType: "application/merge-patch+json" },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    };
    const statusReady = async () => {
      const cm = await host().request<{ data?: Record<string, string> }>(
        "GET",
        "/api/v1/namespaces/vc-system/configmaps/vc-metrics-proxy-status",
      );
      return parseReplicaStatus(cm.body.data?.["e2e-0"])?.ready.includes(`${NS}/a`) === true;
    };
    const bundle = async () => {
      const api = await virtual().request<{ spec: { caBundle?: string } }>(
        "GET",
        `/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.${GROUP}`,
      );
      return Buffer.from(api.body.spec.caBundle ?? "", "base64").toString("utf8");
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "vc-e2e-handover-"));
      repo = join(dir, "repo");
      for (const [file, text] of [
        ["clusters/a/cluster.yaml", `namespace: ${NS}\n`],
        ["clusters/a/values.yaml", "integrations:\n  metricsServer:\n    enabled: true\n"],
      ] as const) {
        mkdirSync(join(repo, file, ".."), { recursive: true });
        writeFileSync(join(repo, file), text);
      }
      writeFileSync(join(dir, "virtual.kubeconfig"), readFileSync(virtual().kubeconfigPath));
      backend = metricsBackend(dir, () => PODS);
      await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
      for (const file of ["deploy/reconciler/namespace.yaml", "deploy/metrics-proxy/serviceaccount.yaml"])
        expect((await host().kubectl(["apply", "-f", join(ROOT, file)])).code).to.equal(0);
      for (const file of ["rbac.yaml", "configmap.yaml"])
        expect((await host().kubectl(["apply", "-f", join(ROOT, "deploy/metrics-proxy", file)])).code).to.equal(0);

      // What an earlier vc left: the cluster applied with its own proxy (recorded), no access Role, no mark.
      const first = await vc("apply", repo);
      expect(first.code, first.stdout + first.stderr).to.equal(0);
      const target = new KubeTarget(KubeClient.open({ kubeconfig: host().kubeconfigPath, retry: { attempts: 1 } }));
      target.source = OWNER;
      try {
        const access = `vc-metrics-proxy-access-a`;
        for (const kind of ["roles", "rolebindings"])
          await host().request("DELETE", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/${kind}/${access}`);
        await host().request("DELETE", `/api/v1/namespaces/${NS}/services/${OLD}`);
        const ns = await live(`/api/v1/namespaces/${NS}`);
        delete ns.metadata.labels[LABELS.metricsProxy];
        expect((await host().request("PUT", `/api/v1/namespaces/${NS}`, ns)).status).to.equal(200);
        const old = legacyMetricsProxy("a", NS, OWNER);
        for (const o of old) await target.apply(o, { dryRun: false });
        const record = (await target.recordsByCluster(["a"])).get("a")!;
        const keys = record.inventory.filter((k) => !k.includes(access));
        await target.recordInventory("a", NS, new Set([...keys, ...old.map(objectKey)]));
      } finally {
        await target.close();
      }
      await installHostMetrics(host(), backend, PODS);
      // The control plane's kubeconfig Secret.
      const secret = await host().request("POST", `/api/v1/namespaces/${NS}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "vc-a", namespace: NS },
        data: { config: Buffer.from(readFileSync(virtual().kubeconfigPath)).toString("base64") },
      });
      expect(secret.status).to.equal(201);

      ownServing = servingPair(dir, "own");
      sharedServing = servingPair(dir, "shared");
      own = await startOwn();
      shared = await startProxy(
        parseFlags([
          ...["--kubeconfig", await host().serviceAccountKubeconfig("vc-system", "vc-metrics-proxy")],
          ...["--listen", "127.0.0.1:0", "--tls-cert", sharedServing.cert, "--tls-key", sharedServing.key],
          ...["--tls-ca", sharedServing.ca, "--api-group", GROUP, "--host-api-group", GROUP],
          ...["--virtual-server", "kubeconfig", "--replica-name", "e2e-0", "--refresh-interval", "1s"],
        ]),
        { log: silentLogger, processMetrics: false, retryMs: 200 },
      );
      // The virtual API server reaches the proxies as DNS would lead it: by the cluster's host Service.
      const port = (p: RunningProxy) => Number(new URL(p.url).port);
      watching = setInterval(async () => {
        const svc = await live(`/api/v1/namespaces/${NS}/services/${OLD}`).catch(() => undefined);
        if (svc?.spec?.type === "ExternalName") route = "shared";
        else if (svc?.spec?.type === "ClusterIP") route = "own";
      }, 100);
      forwarder = net.createServer((client) => {
        piped.add(client);
        client.on("close", () => piped.delete(client));
        const to = route === "shared" ? shared : own;
        routed[route]++;
        const upstream = net.connect(port(to!), "127.0.0.1");
        client.pipe(upstream).pipe(client);
        const end = () => (client.destroy(), upstream.destroy());
        client.on("error", end);
        upstream.on("error", end);
      });
      await new Promise<void>((r) => forwarder!.listen(0, "127.0.0.1", r));
      await registerInVirtual(virtual(), GROUP, VIRTUAL_SERVICE_NAME, (forwarder.address() as net.AddressInfo).port);
      await waitFor(
        async () => (await virtual().kubectl(["top", "pod", "-n", "default", "--no-headers"])).code === 0,
        "kubectl top pod to answer through the cluster's own proxy",
        120_000,
      );
      topping = (async () => {
        while (!stopTop) {
          const res = await virtual().kubectl(["top", "pod", "-n", "default", "--no-headers"]);
          tops.push({ at: Date.now(), code: res.code, out: res.code === 0 ? res.stdout : res.stderr });
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
    });
    after(async () => {
      stopTop = true;
      await topping;
      clearInterval(watching);
      await own?.close();
      await shared?.close();
      for (const socket of piped) socket.destroy();
      await new Promise((r) => forwarder?.close(r));
      await new Promise((r) => backend?.close(r));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it(
      "vc apply holds the old proxy while the shared one does not " +
        'answer for the cluster: kept, told --apiservice ""',
      async () => {
        const res = await vc("apply", repo, "--prune");
        expect(res.code, res.stdout + res.stderr).to.equal(0);
        const deployment = await live(`/apis/apps/v1/namespaces/${NS}/deployments/${OLD}`);
        expect(deployment.spec.template.spec.containers[0].args.slice(-2)).to.deep.equal(["--apiservice", ""]);
        expect((await live(`/api/v1/namespaces/${NS}/services/${OLD}`)).spec.type).to.equal("ClusterIP");
        // The Deployment's controller rolls it out: a new pod with the new args, then the old one goes.
        const next = await startOwn();
        const before = own!;
        own = next;
        await before.close();
        await rolledOut();
        // The shared proxy now finds the cluster, puts its CA beside the old one and says it is ready.
        await waitFor(statusReady, "the shared proxy to be ready for the cluster", 120_000);
        const now = await bundle();
        expect(now).to.include(readFileSync(ownServing.ca, "utf8").trim());
        expect(now).to.include(readFileSync(sharedServing.ca, "utf8").trim());
        expect(routed.shared, "no request reached the shared proxy yet").to.equal(0);
      },
    );

    it(
      "vc apply --prune then turns the cluster's Service to the " + "shared proxy and prunes the old objects after it",
      async () => {
        const mark = host().writes().length;
        const res = await vc("apply", repo, "--prune");
        expect(res.code, res.stdout + res.stderr).to.equal(0);
        const writes = host()
          .writes()
          .slice(mark)
          .filter((w) => w.stage === "ResponseComplete" && (w.name === OLD || w.name === `${OLD}-x-${NS}`))
          .map((w) => `${w.verb} ${w.resource}`);
        expect(writes[0], "the Service turns first").to.equal("patch services");
        expect(writes.slice(1).sort()).to.deep.equal(
          [
            "delete clusterrolebindings",
            "delete clusterroles",
            "delete deployments",
            "delete rolebindings",
            "delete roles",
            "delete serviceaccounts",
          ].sort(),
        );
        expect((await live(`/api/v1/namespaces/${NS}/services/${OLD}`)).spec.type).to.equal("ExternalName");
        // Its pod goes with the Deployment; the shared proxy trusts only its own CA once the old proxy is gone.
        await own!.close();
        own = undefined;
        const sharedCa = readFileSync(sharedServing.ca, "utf8").trim();
        await waitFor(
          async () => (await bundle()).trim() === sharedCa,
          "the caBundle to be the shared proxy's CA alone",
          60_000,
        );
        const since = Date.now();
        await waitFor(() => tops.some((t) => t.at > since + 3_000), "more kubectl top after the hand-over", 60_000);
        expect(routed.shared, "requests reached the shared proxy").to.be.greaterThan(0);
      },
    );

    it("kubectl top pod answered every time, before, during and after the hand-over", async () => {
      stopTop = true;
      await topping;
      const failed = tops.filter((t) => t.code !== 0);
      expect(failed, failed.map((f) => f.out).join("\n")).to.deep.equal([]);
      expect(tops.length).to.be.greaterThan(10);
      for (const t of tops)
        expect(
          t.out
            .trim()
            .split("\n")
            .map((l) => l.split(/\s+/).slice(0, 2).join(" "))
            .sort(),
        ).to.deep.equal(["db 12m", "web 11m"]);
    });
  },
);
