import { expect } from "chai";
import fc from "fast-check";
import { labelMatcher } from "../../src/kube/selector.js";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { addPod, eventually, get, proxyFor, startHost, type KubeServer, type PodSpec } from "./fixture.js";
import { addCluster, asFrontProxy, frontProxyOf, sharedProxy, type TestCluster } from "./shared-fixture.js";

const G = "/apis/metrics.orch.io/v1beta1";
const LONG = "a-pod-name-long-enough-that-the-naming-contract-hashes-its-host-name";
type Owner = "a" | "b" | "none" | "a-unannotated";

const podArb = fc.record({
  owner: fc.constantFrom<Owner>("a", "b", "none", "a-unannotated"),
  namespace: fc.constantFrom("default", "team", "x"),
  name: fc.constantFrom("web", "db", "api", LONG),
  app: fc.option(fc.constantFrom("web", "db"), { nil: undefined }),
  tier: fc.option(fc.constantFrom("front", "back"), { nil: undefined }),
});
const SELECTORS = [
  "",
  "app=web",
  "app in (web,db)",
  "tier notin (front)",
  "!tier",
  "app,tier!=back",
  "vc.orch.io/managed-by=a",
];

describe("metrics-proxy isolation (property over random fleets)", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let run = 0;

  before(async () => {
    server = await startHost();
  });
  after(async () => {
    await server?.close();
  });

  it("the proxy for cluster a returns exactly a's pods: nothing of cluster b, nothing unsynced", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(podArb, { maxLength: 14 }), fc.constantFrom(...SELECTORS), async (fleet, selector) => {
        const ns = `fleet-${++run}`;
        // Every host pod gets a unique cpu figure, so an answer shows which host pod it came from.
        const hostPods = new Map<string, PodSpec & { owner: Owner }>();
        fleet.forEach((p, i) => {
          const labels: Record<string, string> = {};
          if (p.app) labels.app = p.app;
          if (p.tier) labels.tier = p.tier;
          const spec: PodSpec & { owner: Owner } = {
            owner: p.owner,
            namespace: p.namespace,
            name: p.name,
            labels,
            cpu: `${i + 1}m`,
            hostNamespace: ns,
          };
          if (p.owner === "a" || p.owner === "b") spec.cluster = p.owner;
          if (p.owner === "a-unannotated")
            Object.assign(spec, {
              cluster: "a",
              noAnnotations: true,
              hostName: `u-${p.name.slice(0, 20)}-${p.namespace}`,
            });
          if (p.owner === "none") spec.hostName = `plain-${p.name.slice(0, 20)}-${p.namespace}`;
          const key = spec.hostName ?? `${p.owner}/${p.namespace}/${p.name}`;
          hostPods.set(key, spec); // a later pod of the same host name replaces the earlier one, as on the host
        });
        for (const spec of hostPods.values()) await addPod(server, spec);

        const match = labelMatcher(selector);
        const expected = [...hostPods.values()]
          .filter((p) => p.owner === "a" && match(p.labels))
          .map((p) => `${p.namespace}/${p.name}=${p.cpu}`)
          .sort();
        const proxy = await proxyFor(server, "a", ["--host-namespace", ns]);
        try {
          const q = selector ? `?labelSelector=${encodeURIComponent(selector)}` : "";
          const list = await get(proxy, `${G}/pods${q}`);
          expect(list.status).to.equal(200);
          const got = list.body.items.map(
            (i: any) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0].usage.cpu}`,
          );
          expect(got).to.deep.equal(expected);
          for (const item of list.body.items) {
            expect(Object.keys(item.metadata.labels ?? {}).every((k) => k === "app" || k === "tier")).to.equal(true);
          }
          // Every identity that is not a's answers 404 on a single read.
          const ownA = new Set(
            [...hostPods.values()].filter((p) => p.owner === "a").map((p) => `${p.namespace}/${p.name}`),
          );
          for (const p of hostPods.values()) {
            const res = await get(proxy, `${G}/namespaces/${p.namespace}/pods/${p.name}`);
            if (ownA.has(`${p.namespace}/${p.name}`)) {
              expect(res.status).to.equal(200);
              const source = [...hostPods.values()].find(
                (h) => h.owner === "a" && h.namespace === p.namespace && h.name === p.name,
              )!;
              expect(res.body.containers[0].usage.cpu).to.equal(source.cpu);
            } else {
              expect(res.status).to.equal(404);
            }
          }
        } finally {
          await proxy.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe("metrics-proxy isolation: the shared proxy over many clusters (property)", function () {
  this.timeout(180_000);
  const CLUSTERS = 12;
  let host: KubeServer;
  let proxy: RunningProxy;
  const clusters: TestCluster[] = [];
  /** Every host pod added, with who planted it where. */
  const planted: Array<{ label: string; hostNamespace: string; namespace: string; name: string; cpu: string }> = [];
  let serial = 0;

  before(async () => {
    host = await startHost();
    host.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-system" } } as never);
    for (let i = 0; i < CLUSTERS; i++) clusters.push(await addCluster(host, `c${i}`));
    proxy = await sharedProxy(host);
    await eventually(async () => (await asFrontProxy(proxy, "/readyz", undefined)).status === 200);
  });
  after(async () => {
    await proxy?.close();
    for (const c of clusters) await c.virtual.close();
    await host?.close();
  });

  it(
    "each cluster reads exactly its own pods: nothing another " + "tenant planted, nothing of another cluster",
    async () => {
      const podArb = fc.record({
        // The syncer of `writer` writes in its own namespace, labelling the pod with `label`'s name.
        writer: fc.nat(CLUSTERS - 1),
        label: fc.oneof(fc.nat(CLUSTERS - 1), fc.constant(-1)),
        namespace: fc.constantFrom("default", "team", "x"),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(podArb, { minLength: 1, maxLength: 20 }), async (fleet) => {
          for (const p of fleet) {
            const n = ++serial;
            const writer = clusters[p.writer]!;
            const label = p.label < 0 ? "" : `c${p.label}`;
            const spec = { namespace: p.namespace, name: `p${n}`, cpu: `${n}m`, hostNamespace: writer.hostNamespace };
            await addPod(host, label ? { ...spec, cluster: label } : { ...spec, hostName: `plain-${n}` });
            planted.push({
              label,
              hostNamespace: writer.hostNamespace,
              namespace: p.namespace,
              name: `p${n}`,
              cpu: `${n}m`,
            });
          }
          await proxy.cache.clear();
          for (const c of clusters) {
            const own = planted
              .filter((p) => p.label === c.name && p.hostNamespace === c.hostNamespace)
              .map((p) => `${p.namespace}/${p.name}=${p.cpu}`)
              .sort();
            await eventually(async () => {
              const res = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(c));
              return res.status === 200 && res.body.items.length === own.length;
            });
            const res = await asFrontProxy(proxy, `${G}/pods`, frontProxyOf(c));
            const got = res.body.items
              .map((i: any) => `${i.metadata.namespace}/${i.metadata.name}=${i.containers[0].usage.cpu}`)
              .sort();
            expect(got, c.name).to.deep.equal(own);
            // Single reads of every pod planted anywhere: only its own are found.
            for (const p of planted.slice(-fleet.length)) {
              const one = await asFrontProxy(proxy, `${G}/namespaces/${p.namespace}/pods/${p.name}`, frontProxyOf(c));
              const mine = p.label === c.name && p.hostNamespace === c.hostNamespace;
              expect(one.status, `${c.name} reads ${p.hostNamespace}/${p.label}/${p.name}`).to.equal(mine ? 200 : 404);
            }
          }
        }),
        { numRuns: 6 },
      );
    },
  );
});
