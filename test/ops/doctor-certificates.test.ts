// vc doctor's gateway-certificate check: pure over snapshots, and read from a live host (the API test server).
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { gatewayCertificates } from "../../src/ops/doctor/certificates.js";
import { CHECKS } from "../../src/ops/doctor/index.js";
import type { HostSnapshot } from "../../src/ops/doctor/types.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { tempDir, vc } from "./helpers.js";

const NS = "vc-shop";
const SECRET = "web-cert-x-edge-x-shop";

const gateway = (credentialName = SECRET, port = 443): KubeObject => ({
  apiVersion: "networking.mesh.io/v1beta1",
  kind: "Gateway",
  metadata: { name: "public-x-edge-x-shop", namespace: NS },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: [
      {
        port: { number: port, name: "https", protocol: "HTTPS" },
        hosts: [`${NS}/web.example.com`],
        tls: { mode: "SIMPLE", credentialName },
      },
    ],
  },
});

const certificate = (
  ready?: { status: string; reason?: string; message?: string },
  secretName = SECRET,
  namespace = NS,
): KubeObject => ({
  apiVersion: "cert-manager.io/v1",
  kind: "Certificate",
  metadata: { name: "web-x-edge-x-shop", namespace },
  spec: { secretName, dnsNames: ["web.example.com"], issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } },
  ...(ready ? { status: { conditions: [{ type: "Ready", ...ready }] } } : {}),
});

function snapshot(
  certificates: KubeObject[] | undefined,
  gateways: KubeObject[] = [gateway()],
  existingSecrets: string[] = [],
): HostSnapshot {
  return {
    cluster: "shop",
    namespace: NS,
    pods: [],
    events: [],
    pvcs: [],
    deployments: [],
    serviceAccounts: [],
    services: [],
    virtualServices: [],
    destinationRules: [],
    slowReads: [],
    gateways,
    ingressPods: [],
    ingressServices: [],
    existingSecrets,
    ...(certificates ? { certificates } : {}),
  };
}

const NOT_READY = { status: "False", reason: "Failed", message: "ACME challenge failed" };

describe("ops/doctor: gateway certificates", () => {
  it("is one of vc doctor's checks", () => {
    expect(CHECKS.map(([, check]) => check)).to.include(gatewayCertificates);
  });

  it("reports a Gateway whose certificate is not Ready, with the resolution of 'HTTPS certificate errors'", () => {
    const found = gatewayCertificates(snapshot([certificate(NOT_READY)]));
    expect(found).to.deep.equal([
      {
        check: "certificate-not-ready",
        severity: "error",
        object: `Gateway ${NS}/public-x-edge-x-shop`,
        message:
          `the Certificate ${NS}/web-x-edge-x-shop that issues tls.credentialName ${SECRET} (port 443) is ` +
          `not Ready: Ready is False (Failed): ACME challenge failed`,
        resolution:
          "verify the secret named in `tls.credentialName` exists; enable `integrations.certManager`; recreate the " +
          "gateway after the certificate is ready; " +
          `kubectl -n ${NS} describe certificate web-x-edge-x-shop shows why cert-manager has not issued it`,
      },
    ]);
  });

  it(
    "a certificate without a Ready condition yet is not Ready; an earlier Secret still served makes it a " + "warning",
    () => {
      const [fresh] = gatewayCertificates(snapshot([certificate()]));
      expect(fresh!.message).to.match(/is not Ready: it has no Ready condition yet$/);
      expect(fresh!.severity).to.equal("error");
      const [renewing] = gatewayCertificates(snapshot([certificate(NOT_READY)], [gateway()], [`${NS}/${SECRET}`]));
      expect(renewing!.severity).to.equal("warning");
      expect(renewing!.message).to.match(/; the Secret holds an earlier certificate$/);
    },
  );

  it(
    "is quiet for a Ready certificate, a Secret no Certificate issues, a Certificate of another namespace, and " +
      "when certificates were not read",
    () => {
      expect(gatewayCertificates(snapshot([certificate({ status: "True" })]))).to.deep.equal([]);
      expect(gatewayCertificates(snapshot([certificate(NOT_READY, "other-cert")]))).to.deep.equal([]);
      expect(gatewayCertificates(snapshot([certificate(NOT_READY, SECRET, "elsewhere")]))).to.deep.equal([]);
      expect(gatewayCertificates(snapshot(undefined))).to.deep.equal([]);
      const unreadable = snapshot([certificate(NOT_READY)]);
      unreadable.unreadable = { certificates: "not visible to you" };
      expect(gatewayCertificates(unreadable)).to.deep.equal([]);
    },
  );

  it("reports a Gateway once per certificate, however many of its servers use it", () => {
    const gw = gateway();
    (gw.spec as { servers: unknown[] }).servers.push({
      port: { number: 8443, name: "https-alt", protocol: "HTTPS" },
      hosts: ["x"],
      tls: { mode: "SIMPLE", credentialName: SECRET },
    });
    expect(gatewayCertificates(snapshot([certificate(NOT_READY)], [gw]))).to.have.length(1);
  });
});

describe("ops: vc doctor reads certificates (live host)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  const repo = (certManager: boolean): string => {
    const dir = tempDir();
    mkdirSync(join(dir, "clusters/shop"), { recursive: true });
    writeFileSync(
      join(dir, "clusters/shop/values.yaml"),
      `integrations:\n  mesh:\n    enabled: true\n  certManager:\n    enabled: ${certManager}\ncontrolPlane:\n  ` +
        `backingStore:\n    kvstore:\n      persistence:\n        enabled: true\n`,
    );
    return dir;
  };
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", NS] });
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { "mesh-injection": "enabled" } },
    });
    server.put({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "shop", namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { release: "shop" } },
        template: { metadata: { labels: { release: "shop" } }, spec: { containers: [{ name: "syncer", image: "x" }] } },
      },
    });
    server.put(gateway());
    server.put(certificate(NOT_READY));
  });
  after(async () => server?.close());

  it(
    "reports the not-Ready certificate of a Gateway while the integration is on; reads no certificates while " +
      "it is off",
    async () => {
      const on = await vc([
        "doctor",
        "shop",
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        repo(true),
        "-o",
        "json",
      ]);
      const out = JSON.parse(on.stdout) as { findings: Array<{ check: string; object: string; message: string }> };
      const found = out.findings.filter((f) => f.check === "certificate-not-ready");
      expect(found.map((f) => f.object)).to.deep.equal([`Gateway ${NS}/public-x-edge-x-shop`]);
      expect(found[0]!.message).to.include("Ready is False (Failed): ACME challenge failed");
      expect(on.code).to.equal(1);
      server.resetRequests();
      const off = await vc([
        "doctor",
        "shop",
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        repo(false),
        "-o",
        "json",
      ]);
      expect(
        (JSON.parse(off.stdout) as { findings: Array<{ check: string }> }).findings.map((f) => f.check),
      ).to.not.include("certificate-not-ready");
      expect(server.countRequests({ resource: "certificates" })).to.equal(0);
    },
  );
});
