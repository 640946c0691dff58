// The rollout record store on the API test server: write and read back, a request under its own field manager, the
// record write that clears it, a request written in between (409), damaged data, and snapshots.
import { expect } from "chai";
import { KubeApiError, KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { fromRolloutConfigMap, REQUEST_FIELD_MANAGER, RolloutStore, rolloutName } from "../../src/rollout/store.js";
import { begin } from "../../src/rollout/step.js";
import { baseDigest } from "../../src/rollout/snapshot.js";

describe("rollout: the record store", () => {
  let kube: KubeServer;
  let client: KubeClient;
  let store: RolloutStore;
  const files = { "fleet/values.yaml": "a: 1\n" };
  const record = () =>
    begin({
      source: "platform",
      to: { digest: baseDigest(files), revision: "r1" },
      waves: [{ name: "all", clusters: ["a"] }],
      from: { a: "0".repeat(64) },
      now: Date.parse("2026-11-25T10:00:00Z"),
    });

  before(async () => {
    kube = await startKubeServer();
    client = KubeClient.open({
      kubeconfig: kube.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20, attempts: 2 },
    });
    store = new RolloutStore(client, "vc-system");
  });
  after(async () => {
    client.close();
    await kube.close();
  });

  it("has no rollout until one is written; creates the records namespace with the first", async () => {
    expect(await store.read("platform")).to.deep.equal({});
    const rv = await store.write(record(), undefined);
    expect(rv).to.be.a("string");
    const cm = kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))!;
    expect(cm.metadata.labels).to.deep.equal({ "vc.orch.io/record": "rollout", "vc.orch.io/owner": "platform" });
    expect(kube.get("v1", "Namespace", "", "vc-system")!.metadata.labels).to.deep.include({
      "vc.orch.io/platform-namespace": "true",
    });
    const back = await store.read("platform");
    expect(back.record).to.deep.equal(record());
    expect(back.resourceVersion).to.equal(rv);
  });

  it("#38.4: in a namespace without the platform mark reads, writes and requests nothing", async () => {
    kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenant-made" } });
    const planted = { ...kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))! };
    planted.metadata = { ...planted.metadata, namespace: "tenant-made", resourceVersion: undefined, uid: undefined };
    kube.put(planted);
    kube.resetRequests();
    const other = new RolloutStore(client, "tenant-made");
    for (const use of [
      () => other.read("platform"),
      () => other.write(record(), undefined),
      () => other.request("platform", { action: "abort", by: "tenant", at: "" }),
      () => other.readSnapshot(baseDigest(files)),
    ])
      await use().then(
        () => expect.fail("used a namespace without the platform mark"),
        (err: Error) => expect(err.message).to.match(/namespace tenant-made exists without the platform mark/),
      );
    expect(kube.requests.filter((r) => r.resource === "configmaps")).to.deep.equal([]);
  });

  it(
    "a request is written alone under its own field manager; a write at an older resourceVersion conflicts; the " +
      "next write clears it",
    async () => {
      const read = await store.read("platform");
      await store.request("platform", { action: "pause", by: "alice", at: "2026-11-25T10:05:00Z" });
      const cm = kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))!;
      const managers = (cm.metadata.managedFields as Array<{ manager: string; fieldsV1?: unknown }>).map(
        (m) => m.manager,
      );
      expect(managers).to.include(REQUEST_FIELD_MANAGER);
      expect(JSON.parse((cm.data as Record<string, string>).rollout!).phase).to.equal("Progressing"); // untouched
      const err = await store
        .write({ ...read.record!, message: "stale" }, read.resourceVersion)
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).status).to.equal(409);
      const fresh = await store.read("platform");
      expect(fresh.request).to.deep.equal({ action: "pause", by: "alice", at: "2026-11-25T10:05:00Z" });
      expect(fresh.record!.request).to.deep.equal(fresh.request);
      await store.write({ ...fresh.record!, phase: "Paused" }, fresh.resourceVersion);
      const after = await store.read("platform");
      expect(after.request).to.equal(undefined);
      expect(after.record!.phase).to.equal("Paused");
    },
  );

  it("reads data it did not write as damaged, never as a record", () => {
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: rolloutName("platform"), labels: { "vc.orch.io/record": "rollout" } },
      data: { rollout: '{"phase":"Completed"}' },
    };
    expect(fromRolloutConfigMap(cm, "platform").damaged).to.be.a("string");
    expect(fromRolloutConfigMap({ ...cm, data: { rollout: "not json" } }, "platform").damaged).to.be.a("string");
    expect(fromRolloutConfigMap(cm, "other").damaged).to.equal("not a rollout record");
  });

  it("stores a snapshot once and reads it back checked against its digest", async () => {
    const snap = { digest: baseDigest(files), files, revision: "r1" };
    expect(await store.readSnapshot(snap.digest)).to.equal(undefined);
    await store.writeSnapshot("platform", snap);
    expect(await store.readSnapshot(snap.digest)).to.deep.equal(snap);
    expect(await store.readSnapshot("f".repeat(64))).to.equal(undefined);
  });
});
