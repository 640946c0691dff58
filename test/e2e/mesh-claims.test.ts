// Mesh objects that reach past the tenant, on a real API server: a public host is a fleet-wide claim (the older claim
// wins, for vc apply, vc diff and the reconciler), every VirtualService and DestinationRule lands with exportTo ["."],
// and an external host such as example.com stays an external host.
import { expect } from "chai";
import { join } from "node:path";
import { rmSync } from "node:fs";
import { silentLogger } from "../../src/model/log.js";
import { reconcileOnce } from "../../src/reconciler/service.js";
import { installExampleCrds, useRealKube, type RealKube } from "../support/real-kube.js";
import { exampleRepo, getJson, kubectl, vcOn } from "./plan-support.js";

const MESH_VALUES = "integrations:\n  mesh:\n    enabled: true\n";

/**
 * A cluster folder whose Gateway serves `hosts` and whose VirtualService (bound to it) sends traffic to example.com
 * too.
 */
function intruder(name: string, hosts: string[]): Record<string, string> {
  return {
    [`clusters/${name}/values.yaml`]: MESH_VALUES,
    [`clusters/${name}/mesh/edge.yaml`]: `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: edge
  namespace: web
spec:
  selector:
    istio: ingressgateway
  servers:
    - port: {number: 80, name: http, protocol: HTTP}
      hosts:
${hosts.map((h) => `        - "${h}"`).join("\n")}
---
apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: front
  namespace: web
spec:
  exportTo: ["*"]
  hosts:
${hosts.map((h) => `    - "${h}"`).join("\n")}
  gateways: [edge]
  http:
    - route:
        - destination:
            host: front
      mirror:
        host: example.com
`,
  };
}

describe("e2e: public hosts are fleet-wide claims; mesh objects stay in the tenant", function () {
  this.timeout(240_000);
  const kube = useRealKube();
  let host: RealKube;
  const repos: string[] = [];
  const repo = (clusters: string[], files: Record<string, string> = {}) => {
    const r = exampleRepo(clusters, files);
    repos.push(r);
    return r;
  };
  const gateways = async (ns: string): Promise<string[]> =>
    (await getJson(host, ["-n", ns, "gateways.networking.mesh.io"])).items.map(
      (g: { metadata: { name: string } }) => g.metadata.name,
    );

  before(async () => {
    host = kube();
    await installExampleCrds(host);
  });
  after(() => {
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it("applies bookinfo's mesh objects with exportTo ['.'] only, whatever the manifest wrote", async () => {
    const apply = await vcOn(host, "apply", repo(["bookinfo"]), "--owner", "fleet");
    expect(apply.code, apply.stdout + apply.stderr).to.equal(0);
    const vs = await getJson(host, ["-n", "team-bookinfo", "virtualservices.networking.mesh.io"]);
    const dr = await getJson(host, ["-n", "team-bookinfo", "destinationrules.networking.mesh.io"]);
    expect(vs.items.length).to.be.greaterThan(0);
    for (const o of [...vs.items, ...dr.items]) expect(o.spec.exportTo, o.metadata.name).to.deep.equal(["."]);
  });

  it(
    "a cluster that would serve bookinfo.example.com (exactly or by a wildcard) is not applied; bookinfo keeps " +
      "its host",
    async () => {
      const before = await getJson(host, [
        "-n",
        "team-bookinfo",
        "gateways.networking.mesh.io",
        "bookinfo-gateway-x-bookinfo-x-bookinfo",
      ]);
      for (const claim of ["bookinfo.example.com", "*.example.com"]) {
        const r = repo(["bookinfo"], intruder("intruder", [claim]));
        const diff = await vcOn(host, "diff", r, "--owner", "fleet");
        expect(diff.stdout)
          .to.include(`! public host "${claim}" belongs to cluster bookinfo (`)
          .and.include('has served "bookinfo.example.com" since');
        const apply = await vcOn(host, "apply", r, "--owner", "fleet");
        expect(apply.code, apply.stdout + apply.stderr).to.equal(1);
        expect(apply.stdout)
          .to.include(`public host "${claim}" belongs to cluster bookinfo`)
          .and.include("nothing of cluster intruder is applied");
        expect(await gateways("vc-intruder").catch(() => [])).to.deep.equal([]);
      }
      const after = await getJson(host, [
        "-n",
        "team-bookinfo",
        "gateways.networking.mesh.io",
        "bookinfo-gateway-x-bookinfo-x-bookinfo",
      ]);
      expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
    },
  );

  it("the reconciler refuses the newcomer the same way, and applies a cluster whose host nobody holds", async () => {
    const r = repo(["bookinfo"], {
      ...intruder("intruder", ["bookinfo.example.com"]),
      ...intruder("newshop", ["shop.example.com"]),
    });
    const res = await reconcileOnce({
      repo: r,
      branch: "main",
      target: "kube",
      kubeconfig: host.kubeconfigPath,
      intervalMs: 60_000,
      resyncMs: 60_000,
      leaderElect: false,
      allowMassPrune: false,
      owner: "fleet",
      logger: silentLogger,
      cacheDir: join(r, ".cache"),
    });
    const by = new Map(res.clusters.map((c) => [c.cluster, c]));
    expect(by.get("intruder")!.result).to.equal("blocked");
    expect(by.get("intruder")!.message).to.include('public host "bookinfo.example.com" belongs to cluster bookinfo');
    expect(by.get("bookinfo")!.result).to.not.equal("blocked");
    expect(by.get("newshop")!.result, by.get("newshop")!.message).to.equal("applied");
    expect(await gateways("vc-newshop")).to.deep.equal(["edge-x-web-x-newshop"]);
    const vs = await getJson(host, ["-n", "vc-newshop", "virtualservices.networking.mesh.io", "front-x-web-x-newshop"]);
    expect(vs.spec.exportTo).to.deep.equal(["."]);
    expect(vs.spec.http[0].mirror.host, "an external host stays external, never an in-cluster name").to.equal(
      "example.com",
    );
    expect(await gateways("vc-intruder").catch(() => [])).to.deep.equal([]);
  });

  it("two clusters new in one vc apply that claim one host are both refused: neither claim is older", async () => {
    const r = repo([], { ...intruder("left", ["both.example.com"]), ...intruder("right", ["both.example.com"]) });
    const apply = await vcOn(host, "apply", r, "--owner", "fleet");
    expect(apply.code).to.equal(1);
    expect(apply.stdout).to.include(
      'public host "both.example.com" belongs to cluster right (cluster right claims it in the same run and neither claim is live yet',
    );
    expect(apply.stdout).to.include(
      'public host "both.example.com" belongs to cluster left (cluster left claims it in the same run',
    );
    for (const ns of ["vc-left", "vc-right"])
      expect((await kubectl(host, ["get", "gateways.networking.mesh.io", "-A", "-o", "name"])).includes(ns)).to.equal(
        false,
      );
  });

  it(
    "two clusters new in one reconciler pass that claim one host: exactly one is applied (the name that sorts " +
      "first), the other writes no Gateway",
    async () => {
      const r = repo([], { ...intruder("pass-b", ["race.example.com"]), ...intruder("pass-a", ["race.example.com"]) });
      for (const round of [1, 2]) {
        const res = await reconcileOnce({
          repo: r,
          branch: "main",
          target: "kube",
          kubeconfig: host.kubeconfigPath,
          intervalMs: 60_000,
          resyncMs: 60_000,
          leaderElect: false,
          allowMassPrune: false,
          owner: "fleet",
          logger: silentLogger,
          cacheDir: join(r, ".cache"),
        });
        const by = new Map(res.clusters.map((c) => [c.cluster, c]));
        expect(by.get("pass-a")!.result, `round ${round}: ${by.get("pass-a")!.message}`).to.equal("applied");
        expect(by.get("pass-b")!.result, `round ${round}`).to.equal("blocked");
        expect(by.get("pass-b")!.message).to.include('public host "race.example.com" belongs to cluster pass-a');
        expect(await gateways("vc-pass-a")).to.deep.equal(["edge-x-web-x-pass-a"]);
        expect(await gateways("vc-pass-b").catch(() => [])).to.deep.equal([]);
      }
    },
  );

  it(
    "a Gateway the syncer plants in its host namespace, labelled as vc's and older than any claim, claims " + "nothing",
    async () => {
      const syncer = "system:serviceaccount:team-bookinfo:vc-bookinfo";
      const planted = {
        apiVersion: "networking.mesh.io/v1beta1",
        kind: "Gateway",
        metadata: { name: "planted", namespace: "team-bookinfo", labels: { "vc.orch.io/inventory": "bookinfo" } },
        spec: {
          selector: { istio: "ingressgateway" },
          servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["planted.example.com"] }],
        },
      };
      const made = await host.kubectl(["apply", "-f", "-", "--as", syncer], { input: JSON.stringify(planted) });
      expect(made.code, `the syncer may write Gateways in its namespace: ${made.stderr}`).to.equal(0);
      const r = repo(["bookinfo"], intruder("claimer", ["planted.example.com"]));
      const apply = await vcOn(host, "apply", r, "--owner", "fleet");
      expect(apply.code, apply.stdout + apply.stderr).to.equal(0);
      expect(apply.stdout).to.not.include('public host "planted.example.com" belongs to');
      expect(await gateways("vc-claimer")).to.deep.equal(["edge-x-web-x-claimer"]);
    },
  );
});
