// Discovery of the metrics proxy in every form a 1.20-1.36 aggregator or kubectl asks for. The Accept headers are the
// ones client-go (discovery_client.go: AcceptV1, AcceptV2Beta1, AcceptV2, AcceptV2NoPeer and their joined order) and
// the aggregator (handler_discovery.go: v2beta1 alone in 1.26-1.29, v2 then v2beta1 later, plain JSON for its legacy
// fallback) send; answers are read the way those clients read them (the Content-Type's g/v/as parameters in any order,
// stale versions and resources without a response kind dropped).
import { expect } from "chai";
import { aggregatedCore, aggregatedGroups } from "../../src/metrics-proxy/discovery.js";
import { withAuthenticatedGroup } from "../../src/metrics-proxy/front-proxy.js";
import { discoveryAnswer, etagOf, negotiateDiscovery, parseAccept } from "../../src/metrics-proxy/negotiate.js";
import type { RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { proxyFor, startHost, type KubeServer } from "./fixture.js";

const ACCEPT_V1 = "application/json";
const ACCEPT_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
const ACCEPT_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const ACCEPT_V2_NOPEER = `${ACCEPT_V2};profile=nopeer`;
/** What kubectl/client-go 1.27+ send to /api and /apis. */
const CLIENT_GO = `${ACCEPT_V2},${ACCEPT_V2BETA1},${ACCEPT_V1}`;
/** What the aggregator of 1.26-1.29 sends to an APIService's /apis. */
const AGGREGATOR_126 = ACCEPT_V2BETA1;
/** What the aggregator of 1.30+ sends to an APIService's /apis. */
const AGGREGATOR_CURRENT = `${ACCEPT_V2},${ACCEPT_V2BETA1}`;

/** client-go's ContentTypeIsGVK: application/json with g, v and as in any order, other parameters ignored. */
function contentTypeIsGVK(contentType: string, version: string): boolean {
  const [base, ...params] = contentType.split(";").map((p) => p.trim());
  const p = Object.fromEntries(params.map((x) => x.split("=").map((s) => s.trim()) as [string, string]));
  return (
    base === "application/json" && p.g === "apidiscovery.k8s.io" && p.v === version && p.as === "APIGroupDiscoveryList"
  );
}

/** client-go's SplitGroupsAndResources: group versions (stale ones failed) and the resources a client keeps. */
function split(list: any): {
  groups: Record<string, string[]>;
  resources: Record<string, Array<{ name: string; namespaced: boolean; kind: string; verbs: string[] }>>;
  failed: string[];
} {
  const groups: Record<string, string[]> = {};
  const resources: Record<string, Array<{ name: string; namespaced: boolean; kind: string; verbs: string[] }>> = {};
  const failed: string[] = [];
  for (const g of list.items) {
    const name = g.metadata?.name ?? "";
    groups[name] = [];
    for (const v of g.versions) {
      const gv = name ? `${name}/${v.version}` : v.version;
      if (v.freshness === "Stale") {
        failed.push(gv);
        continue;
      }
      groups[name]!.push(v.version);
      resources[gv] = (v.resources ?? [])
        .filter((r: any) => r.responseKind && (r.responseKind.group || r.responseKind.version || r.responseKind.kind))
        .map((r: any) => ({
          name: r.resource,
          namespaced: r.scope === "Namespaced",
          kind: r.responseKind.kind,
          verbs: r.verbs,
        }));
    }
  }
  return { groups, resources, failed };
}

describe("metrics-proxy discovery: content negotiation", () => {
  it("reads client-go's and the aggregators' Accept headers as they mean them", () => {
    expect(negotiateDiscovery(CLIENT_GO, true)).to.equal("v2");
    expect(
      negotiateDiscovery(`${ACCEPT_V2_NOPEER},${CLIENT_GO}`, true),
      "no peers here: the nopeer profile is the whole document",
    ).to.equal("v2");
    expect(negotiateDiscovery(AGGREGATOR_CURRENT, true)).to.equal("v2");
    expect(negotiateDiscovery(AGGREGATOR_126, true)).to.equal("v2beta1");
    expect(negotiateDiscovery(ACCEPT_V1, true), "the aggregator's legacy fallback and kubectl 1.20").to.equal("legacy");
    expect(negotiateDiscovery(undefined, true)).to.equal("legacy");
    expect(negotiateDiscovery("*/*", true)).to.equal("legacy");
    expect(negotiateDiscovery("application/*", true)).to.equal("legacy");
  });

  it("honours q-values, drops q=0 and falls back to the next served range", () => {
    expect(negotiateDiscovery(`${ACCEPT_V1};q=0.9,${ACCEPT_V2};q=0.5`, true)).to.equal("legacy");
    expect(negotiateDiscovery(`${ACCEPT_V1};q=0.5,${ACCEPT_V2};q=0.9`, true)).to.equal("v2");
    expect(negotiateDiscovery(`${ACCEPT_V2};q=0,${ACCEPT_V1}`, true)).to.equal("legacy");
    expect(negotiateDiscovery(`${ACCEPT_V2};q=0`, true)).to.equal(undefined);
    expect(
      negotiateDiscovery(`application/vnd.kubernetes.protobuf,${ACCEPT_V2BETA1}`, true),
      "protobuf is not served; the next is",
    ).to.equal("v2beta1");
    expect(
      negotiateDiscovery(`application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,${ACCEPT_V1}`, true),
      "an unknown version is skipped",
    ).to.equal("legacy");
    expect(
      parseAccept(" application/json ; q=0.3 , */*;q=0.1").map((r) => [`${r.type}/${r.subtype}`, r.q]),
    ).to.deep.equal([
      ["application/json", 0.3],
      ["*/*", 0.1],
    ]);
  });

  it("offers the aggregated forms only where they exist, and nothing it cannot serve", () => {
    expect(negotiateDiscovery(ACCEPT_V2, false), "/apis/<group> has no aggregated form").to.equal(undefined);
    expect(negotiateDiscovery(CLIENT_GO, false), "with a fallback it answers legacy").to.equal("legacy");
    expect(
      negotiateDiscovery("application/json;as=Table;g=meta.k8s.io;v=v1", true),
      "discovery is not a Table",
    ).to.equal(undefined);
    expect(negotiateDiscovery("application/yaml", true)).to.equal(undefined);
    expect(negotiateDiscovery("application/vnd.kubernetes.protobuf", true)).to.equal(undefined);
    expect(() =>
      discoveryAnswer(
        "application/yaml",
        undefined,
        () => ({}),
        () => [],
      ),
    )
      .to.throw()
      .with.property("code", 406);
  });

  it("tags aggregated answers with a quoted SHA-512 ETag and answers 304 to it; legacy answers carry none", () => {
    const first = discoveryAnswer(
      ACCEPT_V2,
      undefined,
      () => ({ legacy: true }),
      () => aggregatedGroups("metrics.k8s.io"),
    );
    expect(first.status).to.equal(200);
    expect(first.headers.ETag)
      .to.equal(etagOf(first.body))
      .and.match(/^"[0-9A-F]{128}"$/);
    expect(first.headers.Vary).to.equal("Accept");
    const again = discoveryAnswer(
      ACCEPT_V2,
      first.headers.ETag,
      () => ({}),
      () => aggregatedGroups("metrics.k8s.io"),
    );
    expect(again.status).to.equal(304);
    expect(again.body).to.equal("");
    const beta = discoveryAnswer(
      ACCEPT_V2BETA1,
      first.headers.ETag,
      () => ({}),
      () => aggregatedGroups("metrics.k8s.io"),
    );
    expect(beta.status, "another form is another body, another tag").to.equal(200);
    const legacy = discoveryAnswer(
      ACCEPT_V1,
      first.headers.ETag,
      () => ({ legacy: true }),
      () => aggregatedGroups("metrics.k8s.io"),
    );
    expect(legacy.status).to.equal(200);
    expect(legacy.headers.ETag).to.equal(undefined);
    expect(legacy.headers.Vary).to.equal("Accept");
  });

  it(
    "adds system:authenticated to front-proxy users as k8s.io/apiserver does (the aggregator's own requests carry " +
      "no group)",
    () => {
      expect(withAuthenticatedGroup([])).to.deep.equal(["system:authenticated"]);
      expect(withAuthenticatedGroup(["system:masters"])).to.deep.equal(["system:masters", "system:authenticated"]);
      expect(withAuthenticatedGroup(["system:authenticated", "x"])).to.deep.equal(["system:authenticated", "x"]);
      expect(withAuthenticatedGroup(["system:unauthenticated"])).to.deep.equal(["system:unauthenticated"]);
    },
  );

  it(
    "writes only the JSON fields of k8s.io/api apidiscovery/v2 (and v2beta1, the same), with those it may " +
      "not omit",
    () => {
      // The json tags of APIGroupDiscovery, APIVersionDiscovery and APIResourceDiscovery in types.go; required: no
      // omitempty.
      const GROUP = ["apiVersion", "kind", "metadata", "versions"];
      const VERSION = { all: ["version", "resources", "freshness"], required: ["version"] };
      const RESOURCE = {
        all: [
          "resource",
          "responseKind",
          "scope",
          "singularResource",
          "verbs",
          "shortNames",
          "categories",
          "subresources",
        ],
        required: ["resource", "scope", "singularResource", "verbs"],
      };
      for (const g of [...aggregatedCore(), ...aggregatedGroups("metrics.k8s.io")] as any[]) {
        expect(GROUP).to.include.members(Object.keys(g));
        for (const v of g.versions) {
          expect(VERSION.all).to.include.members(Object.keys(v));
          expect(Object.keys(v)).to.include.members(VERSION.required);
          expect(["Current", "Stale"]).to.include(v.freshness);
          for (const r of v.resources) {
            expect(RESOURCE.all).to.include.members(Object.keys(r));
            expect(Object.keys(r)).to.include.members(RESOURCE.required);
            expect(["Cluster", "Namespaced"]).to.include(r.scope);
            expect(Object.keys(r.responseKind).sort()).to.deep.equal(["group", "kind", "version"]);
          }
        }
      }
    },
  );

  it("builds the aggregated items from the same resources as the legacy lists", () => {
    const { groups, resources } = split({ items: [...aggregatedCore(), ...aggregatedGroups("metrics.orch.io")] });
    expect(groups).to.deep.equal({ "": ["v1"], "metrics.orch.io": ["v1beta1"] });
    expect(resources.v1!.map((r) => `${r.name}:${r.kind}:${r.namespaced}`)).to.deep.equal([
      "nodes:Node:false",
      "pods:Pod:true",
    ]);
    expect(resources["metrics.orch.io/v1beta1"]!.map((r) => `${r.name}:${r.kind}:${r.namespaced}`)).to.deep.equal([
      "nodes:NodeMetrics:false",
      "pods:PodMetrics:true",
    ]);
  });
});

describe("metrics-proxy discovery over HTTP", function () {
  this.timeout(30_000);
  let server: KubeServer;
  let proxy: RunningProxy;

  before(async () => {
    server = await startHost();
    proxy = await proxyFor(server, "a", ["--api-group", "metrics.k8s.io"]);
  });
  after(async () => {
    await proxy?.close();
    await server?.close();
  });

  const ask = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(`${proxy.url}${path}`, { headers });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
  };

  it(
    "answers /apis to kubectl's Accept as aggregated v2 that client-go reads into the metrics group and its " +
      "resources",
    async () => {
      const res = await ask("/apis", { Accept: CLIENT_GO });
      expect(res.status).to.equal(200);
      expect(contentTypeIsGVK(res.headers.get("content-type")!, "v2"), res.headers.get("content-type")!).to.equal(true);
      expect(res.headers.get("vary")).to.equal("Accept");
      expect(res.body).to.include({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" });
      const { groups, resources, failed } = split(res.body);
      expect(failed).to.deep.equal([]);
      expect(groups).to.deep.equal({ "metrics.k8s.io": ["v1beta1"] });
      expect(resources["metrics.k8s.io/v1beta1"]).to.deep.equal([
        { name: "nodes", namespaced: false, kind: "NodeMetrics", verbs: ["get", "list"] },
        { name: "pods", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] },
      ]);
    },
  );

  it(
    "answers the 1.26 aggregator's v2beta1 request in v2beta1, and a repeated request with its ETag " + "with 304",
    async () => {
      const res = await ask("/apis", { Accept: AGGREGATOR_126 });
      expect(res.status).to.equal(200);
      expect(contentTypeIsGVK(res.headers.get("content-type")!, "v2beta1")).to.equal(true);
      expect(res.body.apiVersion).to.equal("apidiscovery.k8s.io/v2beta1");
      expect(split(res.body).resources["metrics.k8s.io/v1beta1"]!.map((r) => r.name)).to.deep.equal(["nodes", "pods"]);
      const etag = res.headers.get("etag")!;
      const again = await ask("/apis", { Accept: AGGREGATOR_126, "If-None-Match": etag });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal("");
      expect(again.headers.get("etag")).to.equal(etag);
    },
  );

  it("answers /api in the aggregated form too (client-go keeps resources only when /api and /apis agree)", async () => {
    const res = await ask("/api", { Accept: CLIENT_GO });
    expect(contentTypeIsGVK(res.headers.get("content-type")!, "v2")).to.equal(true);
    expect(split(res.body).resources.v1!.map((r) => `${r.name}:${r.kind}`)).to.deep.equal(["nodes:Node", "pods:Pod"]);
    const legacy = await ask("/api", { Accept: ACCEPT_V1 });
    expect(legacy.headers.get("content-type")).to.equal("application/json");
    expect(legacy.body.kind).to.equal("APIVersions");
  });

  it("answers the aggregator's legacy fallback and kubectl 1.20 with the legacy documents", async () => {
    const list = await ask("/apis", { Accept: ACCEPT_V1 });
    expect(list.headers.get("content-type")).to.equal("application/json");
    expect(list.body.kind).to.equal("APIGroupList");
    expect(list.headers.get("etag")).to.equal(null);
    const gv = await ask("/apis/metrics.k8s.io/v1beta1", { Accept: ACCEPT_V1 });
    expect(gv.status).to.equal(200);
    expect(gv.body.kind).to.equal("APIResourceList");
    expect(gv.body.resources.map((r: any) => r.name)).to.deep.equal(["nodes", "pods"]);
    const group = await ask("/apis/metrics.k8s.io", { Accept: CLIENT_GO });
    expect(group.status, "no aggregated form below /apis: the legacy fallback of the same Accept").to.equal(200);
    expect(group.body.kind).to.equal("APIGroup");
  });

  it("refuses with a 406 Status what it does not serve", async () => {
    for (const [path, accept] of [
      ["/apis", "application/vnd.kubernetes.protobuf"],
      ["/apis/metrics.k8s.io", ACCEPT_V2],
      ["/apis/metrics.k8s.io/v1beta1", "application/yaml"],
      ["/api", "application/json;as=Table;g=meta.k8s.io;v=v1"],
    ] as const) {
      const res = await ask(path, { Accept: accept });
      expect(res.status, `${path} ${accept}`).to.equal(406);
      expect(res.body).to.include({ kind: "Status", reason: "NotAcceptable", code: 406 });
    }
  });
});
