// Certificates as host objects: translated name and namespace, ownership, and spec.secretName equal to what the Gateway
// reads.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { hostName } from "../../src/translate/names.js";
import { certificateDoc, find, makeSpec, meshDoc, must, withMesh } from "./fixtures.js";

const C = "shop";

const certificate = (name: string, namespace: string, secretName: string): KubeObject => ({
  apiVersion: "cert-manager.io/v1",
  kind: "Certificate",
  metadata: { name, namespace, labels: { app: "web" }, annotations: { note: "kept" } },
  spec: {
    secretName,
    dnsNames: ["web.example.com"],
    duration: "2160h",
    issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
  },
});

const gateway = (name: string, namespace: string, credentialName: string): KubeObject => ({
  apiVersion: "networking.mesh.io/v1beta1",
  kind: "Gateway",
  metadata: { name, namespace },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: [
      {
        port: { number: 443, name: "https", protocol: "HTTPS" },
        hosts: ["web.example.com"],
        tls: { mode: "SIMPLE", credentialName },
      },
    ],
  },
});

function render(certs: KubeObject[], gateways: KubeObject[] = [], certManager = true): KubeObject[] {
  const spec = makeSpec(
    C,
    (v) => {
      withMesh(v);
      v.integrations.certManager.enabled = certManager;
    },
    gateways.map((g, i) => meshDoc(C, `gw${i}.yaml`, g)),
    certs.map((c, i) => certificateDoc(C, `cert${i}.yaml`, c)),
  );
  return renderCluster(spec, "rev1");
}

const credentialOf = (gw: KubeObject): string =>
  (gw.spec as { servers: Array<{ tls: { credentialName: string } }> }).servers[0]!.tls.credentialName;
const secretOf = (cert: KubeObject): string => (cert.spec as { secretName: string }).secretName;

describe("render/certificates", () => {
  it("renders a Certificate into the host namespace with its translated name, ownership and source", () => {
    const cert = must(render([certificate("web", "edge", "web-cert")]), "Certificate");
    expect(cert.apiVersion).to.equal("cert-manager.io/v1");
    expect(cert.metadata).to.deep.equal({
      name: "web-x-edge-x-shop",
      namespace: "vc-shop",
      labels: { app: "web", "vc.orch.io/inventory": C, "vc.orch.io/managed-by": C },
      annotations: {
        note: "kept",
        "vc.orch.io/object-name": "web",
        "vc.orch.io/object-namespace": "edge",
        "vc.orch.io/revision": "rev1",
        "vc.orch.io/source-file": "clusters/shop/certificates/cert0.yaml",
      },
    });
    expect(cert.spec).to.deep.equal({
      secretName: "web-cert-x-edge-x-shop",
      dnsNames: ["web.example.com"],
      duration: "2160h",
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
    });
  });

  it(
    "translates spec.secretName exactly as the Gateway of the same namespace translates tls.credentialName (long " +
      "names hashed alike)",
    () => {
      const long = `tls-${"x".repeat(70)}`;
      for (const [ns, secret] of [
        ["edge", "web-cert"],
        ["default", long],
        ["a-very-long-virtual-namespace-name", "cert"],
      ] as const) {
        const objs = render([certificate("web", ns, secret)], [gateway("public", ns, secret)]);
        const cert = must(objs, "Certificate");
        const gw = must(objs, "Gateway");
        expect(secretOf(cert), `${ns}/${secret}`).to.equal(credentialOf(gw));
        expect(secretOf(cert))
          .to.equal(hostName(secret, ns, C))
          .and.have.length.at.most(63);
      }
      // A Gateway of another virtual namespace names another Secret.
      const other = render([certificate("web", "edge", "web-cert")], [gateway("public", "web", "web-cert")]);
      expect(secretOf(must(other, "Certificate"))).to.not.equal(credentialOf(must(other, "Gateway")));
    },
  );

  it("renders none while integrations.certManager.enabled is false", () => {
    expect(find(render([certificate("web", "edge", "web-cert")], [], false), "Certificate")).to.equal(undefined);
  });

  it("applies Certificates a stage before the Gateways that read their Secrets", () => {
    const kinds = render([certificate("web", "edge", "web-cert")], [gateway("public", "edge", "web-cert")]).map(
      (o) => o.kind,
    );
    expect(kinds.indexOf("StatefulSet")).to.be.lessThan(kinds.indexOf("Certificate"));
    expect(kinds.indexOf("Certificate")).to.be.lessThan(kinds.indexOf("Gateway"));
  });
});
