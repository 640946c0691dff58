// The records store's memo of one unit of work: one LIST answers the unit's reads, its own writes are seen, and a
// rival's record created since is seen by the next unit (never a memo kept by time).
import { expect } from "chai";
import { RecordStore } from "../../src/records/store.js";
import { recordName } from "../../src/records/record.js";
import { KubeClient } from "../../src/host/client.js";
import { LABELS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const RECORDS = "/api/v1/namespaces/vc-system/configmaps";

describe("records/store: the memo of a unit of work", () => {
  let server: KubeServer;
  let store: RecordStore;
  let rival: RecordStore;
  const lists = () => server.requests.filter((r) => r.method === "GET" && r.path === RECORDS).length;
  const gets = () => server.requests.filter((r) => r.method === "GET" && r.path.startsWith(`${RECORDS}/`)).length;

  beforeEach(async () => {
    server = await startKubeServer();
    const open = () =>
      KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      });
    store = new RecordStore(open(), "vc-system");
    rival = new RecordStore(open(), "vc-system");
    await store.writeInventory("mine", "a", "vc-a", ["Namespace//vc-a"]);
    await store.writeInventory("mine", "b", "vc-b", ["Namespace//vc-b"]);
    server.resetRequests();
  });
  afterEach(async () => {
    store.client.close();
    rival.client.close();
    await server.close();
  });

  it("answers a chunk's LISTs, narrowed LISTs and reads from one LIST", async () => {
    store.memoize({ fleet: true });
    expect((await store.list()).map((r) => r.cluster)).to.deep.equal(["a", "b"]);
    expect((await store.list(`${LABELS.managedBy} in (b)`)).map((r) => r.cluster)).to.deep.equal(["b"]);
    expect((await store.claimants([{ cluster: "a", hostNamespace: "vc-b" }])).map((r) => r.cluster)).to.deep.equal([
      "a",
      "b",
    ]);
    expect((await store.read("mine", "a"))?.inventory).to.deep.equal(["Namespace//vc-a"]);
    expect(await store.read("mine", "c")).to.equal(undefined);
    expect([lists(), gets()]).to.deep.equal([1, 0]);
    // Without the memo every read asks the server.
    store.unmemoize();
    await store.list();
    await store.read("mine", "a");
    expect([lists(), gets()]).to.deep.equal([2, 1]);
  });

  it(
    "puts its own writes into the memo as the server answered them: created, changed and deleted " + "records",
    async () => {
      store.memoize({ fleet: true });
      await store.list();
      await store.writeInventory("mine", "c", "vc-c", ["Namespace//vc-c"]);
      await store.writeInventory("mine", "a", "vc-a", ["Namespace//vc-a", "v1/ConfigMap/vc-a/x"]);
      await store.forget("mine", "b");
      const listed = await store.list();
      expect(listed.map((r) => [r.cluster, r.inventory.length])).to.deep.equal([
        ["a", 2],
        ["c", 1],
      ]);
      // The created record has the server's creationTimestamp: its claim's age, for the older-record rule.
      expect(listed.find((r) => r.cluster === "c")!.since).to.match(/^\d{4}-/);
      expect((await store.read("mine", "c"))?.hostNamespace).to.equal("vc-c");
      expect(lists()).to.equal(1);
    },
  );

  it(
    "sees a rival's record created since in the next unit of work, and without a LIST keeps each record read " +
      "by name",
    async () => {
      store.memoize({ fleet: true });
      expect((await store.claimants([{ cluster: "a", hostNamespace: "vc-a" }])).map((r) => r.source)).to.deep.equal([
        "mine",
      ]);
      await rival.writeInventory("theirs", "a", "vc-a", []);
      // Within the unit the memo stands (the chunk started from that LIST, as it did before the memo)...
      expect((await store.claimants([{ cluster: "a", hostNamespace: "vc-a" }])).map((r) => r.source)).to.deep.equal([
        "mine",
      ]);
      // ...the next unit LISTs again and sees the rival (older first: mine).
      store.memoize({ fleet: true });
      expect((await store.claimants([{ cluster: "a", hostNamespace: "vc-a" }])).map((r) => r.source)).to.deep.equal([
        "mine",
        "theirs",
      ]);
      expect(lists()).to.equal(2);

      // A unit that is not the fleet's (an incremental pass): narrowed LISTs go to the server, a record is read once.
      server.resetRequests();
      store.memoize();
      await store.claimants([{ cluster: "b", hostNamespace: "vc-b" }]);
      await store.read("mine", "b");
      await store.read("mine", "b");
      await store.writeStatus(
        "mine",
        { cluster: "b", hostNamespace: "vc-b", result: "applied", message: "", history: [] } as never,
        0,
      );
      expect((await store.read("mine", "b"))?.status?.result).to.equal("applied");
      expect(server.requests.filter((r) => r.method === "GET").map((r) => r.path)).to.deep.equal([
        RECORDS,
        RECORDS,
        `${RECORDS}/${recordName("mine", "b")}`,
      ]);
    },
  );

  it(
    "a write while a LIST is in flight compares and swaps on that LIST's record, then is put into it: the next " +
      "read sees the write without another LIST",
    async () => {
      store.memoize({ fleet: true });
      server.faults.add({ path: RECORDS, latencyMs: 200, times: 1 });
      const first = store.list();
      await new Promise((r) => setTimeout(r, 50));
      await store.writeInventory("mine", "d", "vc-d", []);
      await first;
      expect((await store.list()).map((r) => r.cluster)).to.include("d");
      expect(lists()).to.equal(1);
    },
  );
  it("answers the claimants of clusters a LIST named from that LIST, every source's, until it writes", async () => {
    await rival.writeInventory("theirs", "a", "vc-x", []);
    server.resetRequests();
    store.memoize();
    // A chunk's LIST of its clusters' records (with its live objects), then its claims: only the namespaces are asked.
    await store.listClusters(["a", "b"], "mine");
    const claimed = await store.claimants([
      { cluster: "a", hostNamespace: "vc-a" },
      { cluster: "b", hostNamespace: "vc-b" },
    ]);
    expect(claimed.map((r) => `${r.source}/${r.cluster}`)).to.deep.equal(["mine/a", "theirs/a", "mine/b"]);
    const selectors = () =>
      server.requests
        .filter((r) => r.method === "GET" && r.path === RECORDS)
        .map((r) => decodeURIComponent(r.query).replace(/&limit=\d+$/, ""));
    expect(selectors()).to.deep.equal([
      `labelSelector=vc.orch.io/record=record,${LABELS.managedBy} in (a,b)`,
      "labelSelector=vc.orch.io/record=record,vc.orch.io/host-namespace in (vc-a,vc-b)",
    ]);
    // A cluster the LIST did not name is asked of the server.
    await store.claimants([{ cluster: "c", hostNamespace: "vc-c" }]);
    expect(selectors().filter((q) => q.includes(`${LABELS.managedBy} in (c)`))).to.have.length(1);
    // After a write of this store the clusters are asked again, and the write is seen.
    await store.writeInventory("mine", "a", "vc-a", ["Namespace//vc-a", "v1/ConfigMap/vc-a/x"]);
    const again = await store.claimants([{ cluster: "a", hostNamespace: "vc-a" }]);
    expect(again.find((r) => r.source === "mine")!.inventory).to.have.length(2);
    expect(selectors().filter((q) => q.includes(`${LABELS.managedBy} in (a)`))).to.have.length(1);
  });

  it("does not keep a LIST of clusters that a write of its own overtook", async () => {
    store.memoize();
    server.faults.add({ path: RECORDS, latencyMs: 200, times: 1 });
    const listing = store.listClusters(["a"], "mine");
    await new Promise((r) => setTimeout(r, 50));
    await store.writeInventory("mine", "a", "vc-a", []);
    await listing;
    server.resetRequests();
    expect(
      (await store.claimants([{ cluster: "a", hostNamespace: "vc-a" }])).find((r) => r.source === "mine")!.inventory,
    ).to.deep.equal([]);
    expect(server.requests.filter((r) => r.method === "GET" && r.path === RECORDS)).to.have.length(2);
  });
});
