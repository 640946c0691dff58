import { expect } from "chai";
import fc from "fast-check";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { classifyHost } from "../../src/translate/index.js";
import { makeSpec, meshDoc, withMesh } from "./fixtures.js";

const API = "networking.mesh.io/v1beta1";
const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/);
const host = fc.oneof(
  label,
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.svc`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.svc.cluster.local`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.svc.cluster.local.`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.svc.cluster`),
  label.map((a) => `*.${a}.svc.cluster.local`),
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}.example.com`),
  label.map((a) => `${a}.com`),
  label.map((a) => `*.${a}.com`),
);
const gateway = fc.oneof(
  label,
  fc.tuple(label, label).map(([a, b]) => `${a}/${b}`),
  fc.constant("mesh"),
);

describe("render/isolation (property)", () => {
  it("never leaves a reference to a service or gateway outside the cluster's host namespace", () => {
    fc.assert(
      fc.property(
        label,
        label,
        fc.array(host, { minLength: 1, maxLength: 5 }),
        fc.array(gateway, { maxLength: 3 }),
        (cluster, ns, hosts, gateways) => {
          const hns = `vc-${cluster}`;
          const vs: KubeObject = {
            apiVersion: API,
            kind: "VirtualService",
            metadata: { name: "r", namespace: ns },
            spec: {
              hosts,
              gateways,
              http: [{ route: hosts.map((h) => ({ destination: { host: h } })), match: [{ gateways }] }],
            },
          };
          const dr: KubeObject = {
            apiVersion: API,
            kind: "DestinationRule",
            metadata: { name: "r", namespace: ns },
            spec: { host: hosts[0], subsets: [{ name: "a", labels: { v: "1" } }] },
          };
          const objs = renderCluster(
            makeSpec(cluster, withMesh, [meshDoc(cluster, "a.yaml", vs), meshDoc(cluster, "a.yaml", dr, 1)]),
            "r",
          );
          // Every host is translated into the cluster's host namespace or kept as an external host; a form that is
          // neither is refused by validation (test/validate/mesh-hosts.test.ts), so it never reaches the host.
          const written = new Set([...hosts]);
          const inHostNs = (h: string) =>
            h.endsWith(`.${hns}.svc.cluster.local`) ||
            classifyHost(h, ns, new Set([ns])).form === "external" ||
            (written.has(h) && classifyHost(h, ns, new Set([ns])).form === "refused");
          for (const o of objs) {
            if (o.metadata.namespace !== undefined) expect(o.metadata.namespace).to.equal(hns);
            expect(o.metadata.labels!["vc.orch.io/managed-by"]).to.equal(cluster);
          }
          const out = objs.find((o) => o.kind === "VirtualService") as any;
          for (const h of [...out.spec.hosts, ...out.spec.http[0].route.map((r: any) => r.destination.host)])
            expect(inHostNs(h), h).to.equal(true);
          for (const g of [...out.spec.gateways, ...out.spec.http[0].match[0].gateways])
            expect(g === "mesh" || g.startsWith(`${hns}/`), g).to.equal(true);
          expect(out.spec.exportTo).to.deep.equal(["."]);
          const rule = objs.find((o) => o.kind === "DestinationRule") as any;
          expect(rule.spec.exportTo).to.deep.equal(["."]);
          expect(inHostNs(rule.spec.host)).to.equal(true);
          expect(rule.spec.subsets[0].labels["vc.orch.io/managed-by"]).to.equal(cluster);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("render/gateway hosts (property)", () => {
  const dns = fc.oneof(
    fc.tuple(label, label).map(([a, b]) => `${a}.${b}.example.com`),
    label.map((a) => `*.${a}.com`),
  );
  const serverHost = fc.oneof(
    dns,
    fc.tuple(label, dns).map(([n, d]) => `${n}/${d}`),
    dns.map((d) => `./${d}`),
    dns.map((d) => `*/${d}`),
  );
  it("binds every Gateway server host to the cluster's host namespace, whatever form the manifest wrote", () => {
    fc.assert(
      fc.property(label, label, fc.array(serverHost, { minLength: 1, maxLength: 5 }), (cluster, ns, hosts) => {
        const gw: KubeObject = {
          apiVersion: API,
          kind: "Gateway",
          metadata: { name: "g", namespace: ns },
          spec: {
            selector: { istio: "ingressgateway" },
            servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts }],
          },
        };
        const objs = renderCluster(makeSpec(cluster, withMesh, [meshDoc(cluster, "g.yaml", gw)]), "r");
        const out = objs.find((o) => o.kind === "Gateway") as any;
        out.spec.servers[0].hosts.forEach((h: string, i: number) => {
          expect(h).to.equal(`vc-${cluster}/${hosts[i]!.slice(hosts[i]!.indexOf("/") + 1)}`);
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe("render/object names (property)", () => {
  it("names every object of any cluster within 63 characters", () => {
    const cluster = fc.stringMatching(/^[a-z]([-a-z0-9]{0,50}[a-z0-9])?$/);
    fc.assert(
      fc.property(cluster, (name) => {
        const objs = renderCluster(
          makeSpec(name, (v) => {
            withMesh(v);
            v.integrations.metricsServer.enabled = true;
            v.policies.resourceQuota.enabled = true;
            v.sync.fromHost.nodes.enabled = true;
            v.controlPlane.backingStore.database.external = { enabled: true, endpoint: "postgres://db" };
          }),
          "r",
        );
        for (const o of objs) expect(o.metadata.name.length, `${o.kind} ${o.metadata.name}`).to.be.at.most(63);
      }),
      { numRuns: 100 },
    );
  });
});
