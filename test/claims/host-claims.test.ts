import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { lostClaims, liveClaimsOf, publicHosts } from "../../src/claims/host-claims.js";
import type { LiveClaim } from "../../src/claims/claim-index.js";
import { KubeClient } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { syncCluster } from "../../src/pipeline/cluster.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const API = "networking.mesh.io/v1beta1";
const gw = (cluster: string, hosts: string[], created?: string): KubeObject => ({
  apiVersion: API,
  kind: "Gateway",
  metadata: {
    name: `gw-x-web-x-${cluster}`,
    namespace: `vc-${cluster}`,
    labels: { "vc.orch.io/inventory": cluster },
    ...(created ? { creationTimestamp: created } : {}),
  },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: hosts.map((h) => `vc-${cluster}/${h}`) }],
  },
});
const vs = (cluster: string, hosts: string[], gateways: string[]): KubeObject => ({
  apiVersion: API,
  kind: "VirtualService",
  metadata: { name: "web", namespace: `vc-${cluster}`, labels: { "vc.orch.io/inventory": cluster } },
  spec: { hosts, gateways },
});

describe("claims/host-claims: one cluster per public host, the older claim wins", () => {
  it(
    "reads the public hosts of Gateways and of VirtualServices bound to a gateway (not cluster services, not " +
      "mesh-only)",
    () => {
      expect(publicHosts(gw("a", ["Shop.Example.com.", "*.api.example.com"]))).to.deep.equal([
        "shop.example.com",
        "*.api.example.com",
      ]);
      expect(
        publicHosts(vs("a", ["shop.example.com", "web-x-shop-x-a.vc-a.svc.cluster.local"], ["vc-a/gw"])),
      ).to.deep.equal(["shop.example.com"]);
      expect(publicHosts(vs("a", ["shop.example.com"], ["mesh"]))).to.deep.equal([]);
      expect(publicHosts(vs("a", ["shop.example.com"], []))).to.deep.equal([]);
    },
  );

  it("refuses a newcomer's claim on a host another cluster serves, exact or overlapping by wildcard", () => {
    const live = liveClaimsOf(gw("victim", ["shop.example.com", "*.pay.example.com"], "2026-01-01T00:00:00Z"));
    for (const host of ["shop.example.com", "SHOP.example.com.", "*.example.com", "*", "eu.pay.example.com"]) {
      const lost = lostClaims("attacker", [gw("attacker", [host])], live);
      expect(
        lost.map((c) => c.holder),
        host,
      ).to.deep.equal(["victim"]);
    }
    expect(lostClaims("attacker", [vs("attacker", ["shop.example.com"], ["vc-attacker/gw"])], live)).to.have.length(1);
    expect(lostClaims("attacker", [gw("attacker", ["other.example.com"])], live)).to.deep.equal([]);
    expect(lostClaims("victim", [gw("victim", ["shop.example.com"])], live)).to.deep.equal([]);
  });

  it("decides between two live claims by age, then by cluster name; two new claims of one run are both refused", () => {
    const live: LiveClaim[] = [
      ...liveClaimsOf(gw("b", ["x.example.com"], "2026-01-01T00:00:00Z")),
      ...liveClaimsOf(gw("a", ["x.example.com"], "2026-02-01T00:00:00Z")),
    ];
    expect(lostClaims("a", [gw("a", ["x.example.com"])], live).map((c) => c.holder)).to.deep.equal(["b"]);
    expect(lostClaims("b", [gw("b", ["x.example.com"])], live)).to.deep.equal([]);
    const tie = [
      ...liveClaimsOf(gw("b", ["x.example.com"], "2026-01-01T00:00:00Z")),
      ...liveClaimsOf(gw("a", ["x.example.com"], "2026-01-01T00:00:00Z")),
    ];
    expect(lostClaims("b", [gw("b", ["x.example.com"])], tie).map((c) => c.holder)).to.deep.equal(["a"]);
    expect(lostClaims("a", [gw("a", ["x.example.com"])], tie)).to.deep.equal([]);
    const peers = new Map([
      ["a", ["y.example.com"]],
      ["b", ["y.example.com"]],
    ]);
    expect(lostClaims("a", [gw("a", ["y.example.com"])], [], peers).map((c) => c.holder)).to.deep.equal(["b"]);
    expect(lostClaims("b", [gw("b", ["y.example.com"])], [], peers).map((c) => c.holder)).to.deep.equal(["a"]);
    // The reconciler's pass: of claims nobody holds live, the name that sorts first wins, so exactly one is applied.
    expect(lostClaims("a", [gw("a", ["y.example.com"])], [], peers, "first-name")).to.deep.equal([]);
    expect(lostClaims("b", [gw("b", ["y.example.com"])], [], peers, "first-name").map((c) => c.holder)).to.deep.equal([
      "a",
    ]);
    expect(
      lostClaims("a", [gw("a", ["x.example.com"])], live, peers, "first-name").map((c) => c.holder),
      "a live claim still wins over a name",
    ).to.deep.equal(["b"]);
  });
});

describe("claims/host-claims against the test API server", () => {
  let server: KubeServer;
  let target: KubeTarget;
  beforeEach(async () => {
    server = await startKubeServer();
    target = new KubeTarget(
      KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      }),
    );
  });
  afterEach(async () => {
    await target.close();
    await server.close();
  });
  const ns = (c: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: `vc-${c}`, labels: { "vc.orch.io/inventory": c } },
  });
  const sync = (c: string, hosts: string[], dryRun = false) =>
    syncCluster(
      target,
      { cluster: c, hostNamespace: `vc-${c}`, desired: [ns(c), gw(c, hosts)] },
      { prune: true, dryRun, allowMassPrune: false },
    );
  const claimLists = () =>
    server.requests.filter(
      (r) =>
        r.method === "GET" &&
        (r.resource === "gateways" || r.resource === "virtualservices") &&
        !r.namespace &&
        decodeURIComponent(r.query).includes("labelSelector=vc.orch.io/inventory") &&
        !decodeURIComponent(r.query).includes("labelSelector=vc.orch.io/inventory="),
    ).length;

  it(
    "blocks the newcomer, and reads the live claims once: vc's own writes of Gateways and VirtualServices are " +
      "folded in",
    async () => {
      expect((await sync("a", ["shop.example.com"])).ok).to.equal(true);
      expect(claimLists()).to.equal(2);
      server.resetRequests();
      const b = await sync("b", ["shop.example.com"]);
      expect(b.plan.blocked).to.include('public host "shop.example.com" belongs to cluster a');
      expect(b.plan.hostClaims).to.deep.equal(["shop.example.com"]);
      expect(b.results.every((r) => r.outcome === "skipped")).to.equal(true);
      expect(server.list(API, "Gateway", "vc-b")).to.have.length(0);
      expect(claimLists(), "a's applied Gateway was folded into the claims read before: no second read").to.equal(0);
      server.resetRequests();
      for (const c of ["c", "d"]) expect((await sync(c, [`${c}.example.com`], true)).plan.blocked).to.equal(undefined);
      expect(claimLists(), "dry runs write nothing: the claims read before are reused").to.equal(0);
    },
  );

  it(
    "a first apply of many clusters with Gateways reads the claims once, not once per cluster, and still sees " +
      "each claim it applied",
    async () => {
      const clusters = ["c1", "c2", "c3", "c4", "c5", "c6"];
      for (const c of clusters) expect((await sync(c, [`${c}.example.com`])).ok, c).to.equal(true);
      expect(claimLists(), "one LIST of Gateways and one of VirtualServices for the whole run").to.equal(2);
      const late = await sync("late", ["c4.example.com"]);
      expect(late.plan.blocked).to.include('public host "c4.example.com" belongs to cluster c4');
      expect(claimLists()).to.equal(2);
      // A claim held by a record on the server is what a fresh target reads too.
      const fresh = new KubeTarget(KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" }));
      try {
        expect(
          (await fresh.hostClaimIndex())
            .objects()
            .map((o) => o.metadata.namespace)
            .sort(),
        ).to.deep.equal(clusters.map((c) => `vc-${c}`));
      } finally {
        await fresh.close();
      }
    },
  );

  it(
    "a Gateway that no record holds claims nothing: a syncer labelling its own Gateway cannot take a host from " +
      "the fleet",
    async () => {
      // What a tenant's syncer can write in its own namespace: a Gateway carrying vc's inventory label, older than any
      // claim.
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-tenant" } });
      server.put(gw("tenant", ["shop.example.com", "*.example.com"], "2020-01-01T00:00:00Z"));
      expect((await target.hostClaimIndex()).objects()).to.deep.equal([]);
      const b = await sync("b", ["shop.example.com"]);
      expect(b.plan.blocked, "no vc record holds the planted Gateway").to.equal(undefined);
      expect(b.ok).to.equal(true);
      expect(server.list(API, "Gateway", "vc-b")).to.have.length(1);
      // Once vc applied b's Gateway its record holds it: that claim counts.
      const c = await sync("c", ["shop.example.com"]);
      expect(c.plan.blocked).to.include('public host "shop.example.com" belongs to cluster b');
    },
  );
});
