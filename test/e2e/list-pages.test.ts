// On a real API server: the records and the public-host claims, read from etcd a page at a time (limit and continue
// with a label selector) and reduced page by page, hold every record and every claim of a host with more than two
// pages.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { objectKey } from "../../src/kube/object.js";
import { inventoryText, INVENTORY_KEY, recordBase } from "../../src/records/record.js";
import { RecordStore } from "../../src/records/store.js";
import { KubeClient, MAPPED_PAGE } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { mapLimit } from "../../src/util/pool.js";
import { LABELS } from "../../src/translate/keys.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";

const CLUSTERS = 2 * MAPPED_PAGE + 7;
const NAMESPACES = 4;
const name = (i: number) => `p${String(i).padStart(4, "0")}`;
const namespaceOf = (i: number) => `vc-pages-${i % NAMESPACES}`;

describe("e2e: a host's records and public-host claims are read a page at a time", function () {
  this.timeout(300_000);
  const kube = useRealKube();
  let client: KubeClient;

  before(async () => {
    const host = kube();
    await installExampleCrds(host);
    client = KubeClient.open({ kubeconfig: host.kubeconfigPath });
    // vc-system as deploy/reconciler/namespace.yaml makes it: a platform namespace, where records may be kept.
    const platform = { [LABELS.platformNamespace]: "true" };
    for (const ns of ["vc-system", ...Array.from({ length: NAMESPACES }, (_, i) => `vc-pages-${i}`)])
      await client.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns, ...(ns === "vc-system" ? { labels: platform } : {}) },
      });
    await mapLimit(
      Array.from({ length: CLUSTERS }, (_, i) => i),
      16,
      async (i) => {
        const c = name(i);
        const gw: KubeObject = {
          apiVersion: "networking.mesh.io/v1beta1",
          kind: "Gateway",
          metadata: { name: `gw-${c}`, namespace: namespaceOf(i), labels: { "vc.orch.io/inventory": c } },
          spec: {
            selector: { istio: "ingressgateway" },
            servers: [
              { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: [`${namespaceOf(i)}/${c}.example.com`] },
            ],
          },
        };
        await client.apply(gw);
        // Every cluster's record holds its Gateway, but the last one's: a Gateway no record holds claims nothing.
        const record = recordBase("vc-system", "src", c, namespaceOf(i));
        if (i < CLUSTERS - 1)
          record.data = { ...(record.data as Record<string, string>), [INVENTORY_KEY]: inventoryText([objectKey(gw)]) };
        await client.apply(record);
      },
    );
  });
  after(() => client?.close());

  it("every record, across its pages", async () => {
    const records = await new RecordStore(client, "vc-system").list();
    expect(records.map((r) => r.cluster)).to.deep.equal(Array.from({ length: CLUSTERS }, (_, i) => name(i)));
  });

  it("every claim a record holds, across its pages, and none a record does not hold", async () => {
    const index = await new KubeTarget(client, new RecordStore(client, "vc-system")).hostClaimIndex();
    expect(index.objects()).to.have.length(CLUSTERS - 1);
    for (const i of [0, MAPPED_PAGE, 2 * MAPPED_PAGE, CLUSTERS - 2])
      expect(
        index.overlapping(`${name(i)}.example.com`).map((c) => c.cluster),
        name(i),
      ).to.deep.equal([name(i)]);
    expect(index.overlapping(`${name(CLUSTERS - 1)}.example.com`), "the Gateway no record holds").to.deep.equal([]);
  });
});
