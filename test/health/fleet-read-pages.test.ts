// vc list's fleet health read: one LIST per kind across namespaces, read a page at a time and kept to the objects the
// clusters render (without managedFields), gives each cluster the health of its own objects whatever page they are on.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { readFleetHealth, type FleetHealthCluster } from "../../src/health/fleet-read.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const CLUSTERS = 1007;
const name = (i: number) => `h${String(i).padStart(4, "0")}`;
const claim = (i: number): KubeObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data", namespace: `vc-${name(i)}` },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
});

describe("health/fleet-read: the fleet's objects of a kind, a page at a time", () => {
  let server: KubeServer;
  let client: KubeClient;
  before(async () => {
    server = await startKubeServer();
    client = KubeClient.open({
      kubeconfig: server.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    for (let i = 0; i < CLUSTERS; i++) {
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: `vc-${name(i)}` } });
      // Every third claim is still pending; the last cluster's claim is missing; a claim no cluster renders sits beside
      // each tenth.
      if (i < CLUSTERS - 1) server.put({ ...claim(i), status: { phase: i % 3 === 0 ? "Pending" : "Bound" } });
      if (i % 10 === 0)
        server.put({ ...claim(i), metadata: { name: "other", namespace: `vc-${name(i)}` }, status: { phase: "Lost" } });
    }
  });
  after(async () => {
    client.close();
    await server.close();
  });

  it("reads each cluster's health from its own objects, across pages", async () => {
    const clusters: FleetHealthCluster[] = Array.from({ length: CLUSTERS }, (_, i) => ({
      name: name(i),
      hostNamespace: `vc-${name(i)}`,
      objects: [claim(i)],
    }));
    server.resetRequests();
    const health = await readFleetHealth(client, clusters);
    expect(health.size).to.equal(CLUSTERS);
    for (const i of [0, 1, 2, 499, 500, 501, 1000, CLUSTERS - 2]) {
      const h = health.get(name(i))!;
      expect(h.status, name(i)).to.equal(i % 3 === 0 ? "Progressing" : "Healthy");
      expect(
        h.objects.map((o) => o.object),
        "a claim no cluster renders is not looked at",
      ).to.have.length(1);
    }
    expect(health.get(name(CLUSTERS - 1))!.status, "its claim is on no page").to.not.equal("Healthy");
    const lists = server.requests
      .filter((r) => r.method === "GET" && r.resource === "persistentvolumeclaims")
      .map((r) => new URLSearchParams(r.query));
    expect(lists.length, "more claims than a page: more than two pages").to.be.greaterThan(2);
    expect(lists.every((q) => Number(q.get("limit")) > 0)).to.equal(true);
  });
});
