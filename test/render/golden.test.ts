import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import type { ClusterSpec } from "../../src/model/cluster.js";
import { renderSpecs } from "../../src/render/fleet.js";
import { renderCluster } from "../../src/render/index.js";
import { toYamlStream } from "../../src/render/output.js";
import { loadAndValidate, validSpecs } from "../../src/validate/index.js";
import { certificateDoc, makeSpec, meshDoc, withMesh } from "./fixtures.js";

// Golden files: `UPDATE_GOLDEN=1 npx mocha test/render/golden.test.ts` rewrites them; review the diff before
// committing.
const HERE = dirname(fileURLToPath(import.meta.url));
const GOLDEN = join(HERE, "golden");
const REPO = join(HERE, "..", "..");
const REVISION = "0123456789abcdef0123456789abcdef01234567";
const update = process.env.UPDATE_GOLDEN === "1";

function compare(file: string, actual: string): void {
  const path = join(GOLDEN, file);
  if (update) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
  }
  expect(existsSync(path), `${file} missing: run with UPDATE_GOLDEN=1`).to.equal(true);
  expect(actual, `${file} differs: run with UPDATE_GOLDEN=1 and review the diff`).to.equal(readFileSync(path, "utf8"));
}

const API = "networking.mesh.io/v1beta1";

/**
 * Every switch on: mesh (all kinds), certificates, metrics, quota, persistence, external database, node sync, custom
 * resources.
 */
function everything(): ClusterSpec {
  const c = "shop";
  return makeSpec(
    c,
    (v) => {
      withMesh(v);
      v.integrations.metricsServer.enabled = true;
      v.integrations.certManager.enabled = true;
      v.policies.resourceQuota = {
        enabled: true,
        quota: { "requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8", "limits.memory": "16Gi" },
      };
      v.controlPlane.backingStore.kvstore.persistence = { enabled: true, size: "10Gi", storageClass: "fast" };
      v.controlPlane.backingStore.kvstore.embedded.enabled = false;
      v.controlPlane.backingStore.database.external = { enabled: true, endpoint: "postgres://vc:pw@db.example.com/vc" };
      v.controlPlane.statefulSet.env = [{ name: "LOG_LEVEL", value: "debug" }];
      v.sync.fromHost.nodes = { enabled: true, all: true };
      v.sync.toHost.customResources = { "certificates.cert-manager.io": { enabled: true } };
    },
    [
      meshDoc(c, "gateway.yaml", {
        apiVersion: API,
        kind: "Gateway",
        metadata: { name: "public", namespace: "edge" },
        spec: {
          selector: { istio: "ingressgateway" },
          servers: [
            {
              port: { number: 443, name: "https", protocol: "HTTPS" },
              hosts: ["shop/shop.example.com"],
              tls: { mode: "SIMPLE", credentialName: "shop-cert" },
            },
          ],
        },
      }),
      meshDoc(c, "reviews.yaml", {
        apiVersion: API,
        kind: "VirtualService",
        metadata: { name: "reviews", namespace: "shop", labels: { app: "reviews" } },
        spec: {
          hosts: ["reviews", "shop.example.com"],
          gateways: ["edge/public", "mesh"],
          http: [
            {
              match: [{ headers: { "end-user": { exact: "jason" } }, gateways: ["mesh"] }],
              fault: { delay: { percentage: { value: 100 }, fixedDelay: "7s" } },
              route: [{ destination: { host: "reviews", subset: "v2" } }],
            },
            {
              mirror: { host: "reviews-shadow" },
              route: [
                { destination: { host: "reviews", subset: "v1", port: { number: 9080 } }, weight: 90 },
                { destination: { host: "ratings.shop.svc.cluster.local" }, weight: 10 },
              ],
            },
          ],
        },
      }),
      meshDoc(
        c,
        "reviews.yaml",
        {
          apiVersion: API,
          kind: "DestinationRule",
          metadata: { name: "reviews", namespace: "shop" },
          spec: {
            host: "reviews",
            trafficPolicy: {
              connectionPool: { tcp: { maxConnections: 100 } },
              outlierDetection: {
                consecutive5xxErrors: 5,
                interval: "10s",
                baseEjectionTime: "30s",
                maxEjectionPercent: 50,
              },
            },
            subsets: [
              { name: "v1", labels: { version: "v1" } },
              { name: "v2", labels: { version: "v2" } },
            ],
          },
        },
        1,
      ),
    ],
    [
      certificateDoc(c, "shop.yaml", {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: "shop", namespace: "edge", labels: { app: "shop" } },
        spec: {
          secretName: "shop-cert",
          dnsNames: ["shop.example.com"],
          commonName: "shop.example.com",
          duration: "2160h",
          renewBefore: "360h",
          usages: ["digital signature", "key encipherment", "server auth"],
          privateKey: { algorithm: "RSA", encoding: "PKCS8", size: 2048, rotationPolicy: "Always" },
          subject: { organizations: ["Shop Inc"] },
          revisionHistoryLimit: 2,
          issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" },
        },
      }),
    ],
  );
}

describe("render/golden", () => {
  it("renders the defaults as golden/defaults.yaml", () => {
    compare("defaults.yaml", toYamlStream(renderCluster(makeSpec("plain"), REVISION)));
  });

  it("renders every switch on as golden/everything.yaml", () => {
    compare("everything.yaml", toYamlStream(renderCluster(everything(), REVISION)));
  });

  describe("example repository clusters/", () => {
    it("validates and renders every example cluster as golden/clusters/<name>.yaml", async function () {
      this.timeout(60000);
      const validation = await loadAndValidate(REPO);
      const errors = validation.diagnostics.filter((d) => d.severity === "error");
      expect(errors, "the example repository must be valid").to.deep.equal([]);
      const fleet = renderSpecs(validSpecs(validation), REVISION);
      expect(fleet.diagnostics).to.deep.equal([]);
      expect(fleet.clusters.length, "the example repository has clusters").to.be.at.least(3);
      for (const c of fleet.clusters) compare(`clusters/${c.spec.name}.yaml`, toYamlStream(c.objects));
      const goldenDir = join(GOLDEN, "clusters");
      const stale = readdirSync(goldenDir).filter((f) => !fleet.clusters.some((c) => `${c.spec.name}.yaml` === f));
      expect(stale, "golden files of clusters that no longer exist").to.deep.equal([]);
    });
  });
});
