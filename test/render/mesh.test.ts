import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { ANNOTATIONS, LABELS, hostName } from "../../src/translate/index.js";
import { at, find, makeSpec, meshDoc, must, withMesh } from "./fixtures.js";

const API = "networking.mesh.io/v1beta1";
const C = "team-a";
const HNS = "vc-team-a";
const fq = (svc: string, ns = "shop") => `${hostName(svc, ns, C)}.${HNS}.svc.cluster.local`;

function render(objects: KubeObject[], edit: Parameters<typeof makeSpec>[1] = withMesh): KubeObject[] {
  return renderCluster(
    makeSpec(
      C,
      edit,
      objects.map((o, i) => meshDoc(C, `m${i}.yaml`, o)),
    ),
    "rev1",
  );
}

function vs(spec: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: API, kind: "VirtualService", metadata: { name: "reviews", namespace: "shop", ...meta }, spec };
}

function renderVs(spec: Record<string, unknown>): any {
  return must(render([vs(spec)]), "VirtualService").spec;
}

describe("render/mesh", () => {
  describe("metadata", () => {
    it("names the object <name>-x-<ns>-x-<cluster> in the host namespace with ownership and source", () => {
      const out = must(
        render([vs({ hosts: ["reviews"] }, { labels: { team: "blue" }, annotations: { note: "x" } })]),
        "VirtualService",
      );
      expect(out.metadata.name).to.equal("reviews-x-shop-x-team-a");
      expect(out.metadata.namespace).to.equal(HNS);
      expect(out.metadata.labels).to.deep.equal({ team: "blue", [LABELS.managedBy]: C, [LABELS.inventory]: C });
      expect(out.metadata.annotations).to.deep.equal({
        note: "x",
        [ANNOTATIONS.objectName]: "reviews",
        [ANNOTATIONS.objectNamespace]: "shop",
        [ANNOTATIONS.sourceFile]: "clusters/team-a/mesh/m0.yaml",
        [ANNOTATIONS.revision]: "rev1",
      });
    });

    it("overrides a user's ownership label and drops server-set metadata", () => {
      const out = must(
        render([vs({}, { labels: { [LABELS.managedBy]: "team-b" }, uid: "u1", resourceVersion: "9" })]),
        "VirtualService",
      );
      expect(out.metadata.labels![LABELS.managedBy]).to.equal(C);
      expect(out.metadata).to.not.have.property("uid");
      expect(out.metadata).to.not.have.property("resourceVersion");
    });

    it("reads a manifest without a namespace as namespace default", () => {
      const out = must(
        render([{ apiVersion: API, kind: "VirtualService", metadata: { name: "web" }, spec: { hosts: ["web"] } }]),
        "VirtualService",
      );
      expect(out.metadata.name).to.equal("web-x-default-x-team-a");
      expect(at(out, "spec.hosts")).to.deep.equal([fq("web", "default")]);
    });
  });

  describe("VirtualService references", () => {
    it("translates hosts[] of the virtual cluster and keeps external and wildcard hosts", () => {
      // svc.ns names a service when ns is one of the cluster's namespaces (here "other", where another manifest lives).
      const objs = render([
        vs({
          hosts: [
            "reviews",
            "ratings.other",
            "reviews.shop.svc.cluster.local.",
            "shop.example.com",
            "*.example.com",
            "example.com",
          ],
        }),
        vs({ hosts: ["x"] }, { name: "x", namespace: "other" }),
      ]);
      expect(find(objs, "VirtualService", "reviews-x-shop-x-team-a")!.spec).to.have.deep.property("hosts", [
        fq("reviews"),
        fq("ratings", "other"),
        fq("reviews"),
        "shop.example.com",
        "*.example.com",
        "example.com",
      ]);
    });

    it(
      "keeps a two-label external host such as example.com as it is, in every host field (never an " +
        "in-cluster name)",
      () => {
        const spec = renderVs({
          hosts: ["example.com"],
          http: [{ route: [{ destination: { host: "example.com" } }], mirror: { host: "example.com" } }],
        });
        expect(spec.hosts).to.deep.equal(["example.com"]);
        expect(spec.http[0].route[0].destination.host).to.equal("example.com");
        expect(spec.http[0].mirror.host).to.equal("example.com");
      },
    );

    it(
      "exports every VirtualService and DestinationRule to its own namespace only, whatever the " + "manifest wrote",
      () => {
        const objs = render([
          vs({ hosts: ["reviews"], exportTo: ["*"] }),
          {
            apiVersion: API,
            kind: "DestinationRule",
            metadata: { name: "r", namespace: "shop" },
            spec: { host: "reviews", exportTo: ["*", "team-x"] },
          },
        ]);
        expect(must(objs, "VirtualService").spec).to.have.deep.property("exportTo", ["."]);
        expect(must(objs, "DestinationRule").spec).to.have.deep.property("exportTo", ["."]);
      },
    );

    it(
      "translates every route destination host in http, tcp and tls routes, keeping weights, subsets " + "and ports",
      () => {
        const route = [
          { destination: { host: "reviews", subset: "v1", port: { number: 9080 } }, weight: 90 },
          { destination: { host: "api.example.com" }, weight: 10 },
        ];
        const spec = renderVs({ http: [{ route }], tcp: [{ route }], tls: [{ route }] });
        for (const section of ["http", "tcp", "tls"]) {
          expect(spec[section][0].route, section).to.deep.equal([
            { destination: { host: fq("reviews"), subset: "v1", port: { number: 9080 } }, weight: 90 },
            { destination: { host: "api.example.com" }, weight: 10 },
          ]);
        }
      },
    );

    it("translates http mirror.host and mirrors[].destination.host", () => {
      const spec = renderVs({
        http: [
          {
            mirror: { host: "reviews-shadow", subset: "v2" },
            mirrors: [{ destination: { host: "ratings.shop.svc" }, percentage: { value: 5 } }],
          },
        ],
      });
      expect(spec.http[0].mirror).to.deep.equal({ host: fq("reviews-shadow"), subset: "v2" });
      expect(spec.http[0].mirrors).to.deep.equal([{ destination: { host: fq("ratings") }, percentage: { value: 5 } }]);
    });

    it("translates gateways[] to <host namespace>/<host name> and keeps the reserved mesh", () => {
      expect(renderVs({ gateways: ["public-gw", "edge/ingress", "mesh"] }).gateways).to.deep.equal([
        `${HNS}/${hostName("public-gw", "shop", C)}`,
        `${HNS}/${hostName("ingress", "edge", C)}`,
        "mesh",
      ]);
    });

    it("reads ./name as a gateway of the manifest's own namespace", () => {
      expect(renderVs({ gateways: ["./public-gw"] }).gateways).to.deep.equal([
        `${HNS}/${hostName("public-gw", "shop", C)}`,
      ]);
    });

    it("translates the legacy FQDN gateway form", () => {
      expect(renderVs({ gateways: ["gw.edge.svc.cluster.local"] }).gateways).to.deep.equal([
        `${HNS}/${hostName("gw", "edge", C)}`,
      ]);
    });

    it("translates match[].gateways in http, tcp and tls routes", () => {
      const match = [{ gateways: ["public-gw", "mesh"], uri: { prefix: "/api" } }];
      const spec = renderVs({ http: [{ match }], tcp: [{ match }], tls: [{ match }] });
      for (const section of ["http", "tcp", "tls"]) {
        expect(spec[section][0].match, section).to.deep.equal([
          { gateways: [`${HNS}/${hostName("public-gw", "shop", C)}`, "mesh"], uri: { prefix: "/api" } },
        ]);
      }
    });

    it("translates a delegate to the host VirtualService", () => {
      const spec = renderVs({
        http: [{ delegate: { name: "child", namespace: "other" } }, { delegate: { name: "local" } }],
      });
      expect(spec.http[0].delegate).to.deep.equal({ name: hostName("child", "other", C), namespace: HNS });
      expect(spec.http[1].delegate).to.deep.equal({ name: hostName("local", "shop", C), namespace: HNS });
    });

    it("passes fault injection, header matches and other fields through unchanged", () => {
      const http = {
        match: [{ headers: { "end-user": { exact: "jason" } } }],
        fault: {
          delay: { percentage: { value: 100 }, fixedDelay: "7s" },
          abort: { percentage: { value: 10 }, httpStatus: 503 },
        },
        timeout: "10s",
        retries: { attempts: 3 },
        route: [{ destination: { host: "ratings", subset: "v1" } }],
      };
      const out = renderVs({ http: [http] }).http[0];
      expect(out.match).to.deep.equal(http.match);
      expect(out.fault).to.deep.equal(http.fault);
      expect(out.timeout).to.equal("10s");
      expect(out.retries).to.deep.equal({ attempts: 3 });
    });
  });

  describe("DestinationRule references", () => {
    const dr: KubeObject = {
      apiVersion: API,
      kind: "DestinationRule",
      metadata: { name: "reviews", namespace: "shop" },
      spec: {
        host: "reviews.shop.svc.cluster.local",
        trafficPolicy: {
          loadBalancer: { simple: "LEAST_REQUEST" },
          tls: { mode: "ISTIO_MUTUAL" },
          outlierDetection: { consecutive5xxErrors: 5, interval: "10s" },
        },
        subsets: [{ name: "v1", labels: { version: "v1" } }, { name: "all" }],
      },
    };

    it("translates host and keeps the traffic policy", () => {
      const out = must(render([dr]), "DestinationRule");
      expect(at(out, "spec.host")).to.equal(fq("reviews"));
      expect(at(out, "spec.trafficPolicy")).to.deep.equal((dr.spec as any).trafficPolicy);
    });

    it("scopes every subset to this virtual cluster's pods by the ownership label", () => {
      const out = must(render([dr]), "DestinationRule");
      expect(at(out, "spec.subsets")).to.deep.equal([
        { name: "v1", labels: { version: "v1", [LABELS.managedBy]: C } },
        { name: "all", labels: { [LABELS.managedBy]: C } },
      ]);
    });

    it("keeps an external host", () => {
      const ext = { ...dr, spec: { host: "api.example.com" } };
      expect(at(must(render([ext]), "DestinationRule"), "spec.host")).to.equal("api.example.com");
    });
  });

  describe("Gateway references", () => {
    const gw: KubeObject = {
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "public-gw", namespace: "edge" },
      spec: {
        selector: { istio: "ingressgateway" },
        servers: [
          {
            port: { number: 80, name: "http", protocol: "HTTP" },
            hosts: ["shop/shop.example.com", "*/any.example.com", "plain.example.com"],
          },
          {
            port: { number: 443, name: "https", protocol: "HTTPS" },
            hosts: ["./secure.example.com"],
            tls: { mode: "SIMPLE", credentialName: "shop-cert" },
          },
        ],
      },
    };

    it("binds every servers[].hosts entry to the cluster's host namespace and keeps the selector and ports", () => {
      const out = must(render([gw]), "Gateway");
      expect(at(out, "spec.selector")).to.deep.equal({ istio: "ingressgateway" });
      expect(at(out, "spec.servers.0.hosts")).to.deep.equal([
        `${HNS}/shop.example.com`,
        `${HNS}/any.example.com`,
        `${HNS}/plain.example.com`,
      ]);
      expect(at(out, "spec.servers.0.port")).to.deep.equal({ number: 80, name: "http", protocol: "HTTP" });
      expect(at(out, "spec.servers.1.hosts")).to.deep.equal([`${HNS}/secure.example.com`]);
    });

    it(
      "never renders a server host another namespace's VirtualService may bind (bare, */, ./ or another " +
        "namespace)",
      () => {
        const out = must(render([gw]), "Gateway");
        const hosts = (at(out, "spec.servers") as Array<{ hosts: string[] }>).flatMap((s) => s.hosts);
        for (const h of hosts) {
          const [ns, name] = h.split("/");
          expect(ns, h).to.equal(HNS);
          expect(name, h).to.match(/^[a-z0-9.-]+$/);
        }
      },
    );

    it("translates tls.credentialName to the secret's host name in the gateway's namespace", () => {
      const out = must(render([gw]), "Gateway");
      expect(at(out, "spec.servers.1.tls")).to.deep.equal({
        mode: "SIMPLE",
        credentialName: hostName("shop-cert", "edge", C),
      });
    });
  });

  describe("switches", () => {
    const all: KubeObject[] = [
      vs({ hosts: ["reviews"] }),
      {
        apiVersion: API,
        kind: "DestinationRule",
        metadata: { name: "reviews", namespace: "shop" },
        spec: { host: "reviews" },
      },
      { apiVersion: API, kind: "Gateway", metadata: { name: "gw", namespace: "shop" }, spec: { selector: { a: "b" } } },
    ];
    const kinds = (objs: KubeObject[]) =>
      objs
        .filter((o) => o.apiVersion === API)
        .map((o) => o.kind)
        .sort();

    it("renders no mesh object while the integration is off", () => {
      expect(kinds(render(all, () => {}))).to.deep.equal([]);
    });

    it("renders every kind while the integration and all switches are on", () => {
      expect(kinds(render(all))).to.deep.equal(["DestinationRule", "Gateway", "VirtualService"]);
    });

    for (const [sw, kind] of [
      ["virtualServices", "VirtualService"],
      ["destinationRules", "DestinationRule"],
      ["gateways", "Gateway"],
    ] as const) {
      it(`drops only ${kind} when ${sw} is off`, () => {
        const out = render(all, (v) => {
          withMesh(v);
          v.integrations.mesh.sync.toHost[sw].enabled = false;
        });
        expect(kinds(out)).to.not.include(kind);
        expect(kinds(out)).to.have.length(2);
      });
    }

    it("skips documents of other API versions or kinds", () => {
      const out = render([
        { ...vs({}), apiVersion: "networking.mesh.io/v1alpha3" },
        { apiVersion: API, kind: "Sidecar", metadata: { name: "s" } },
      ]);
      expect(find(out, "VirtualService")).to.equal(undefined);
      expect(find(out, "Sidecar")).to.equal(undefined);
    });
  });

  it("does not modify its input", () => {
    const input = vs({ hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] });
    const before = JSON.stringify(input);
    render([input]);
    expect(JSON.stringify(input)).to.equal(before);
  });
});
