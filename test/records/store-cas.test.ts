// Every write of a record is a compare-and-swap on its resourceVersion: two writers never lose each other's entries;
// the apply lease of a run is taken on the version a plan saw, refused while another run's is live, taken over once
// that run is gone, and a run that lost it writes nothing more of the cluster.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { KubeClient } from "../../src/host/client.js";
import { APPLYING_ANNOTATION, leaseText, type ApplyLease } from "../../src/records/lease.js";
import { recordName } from "../../src/records/record.js";
import { record, type ClusterStatus, type Reconciliation } from "../../src/records/status.js";
import { RecordStore } from "../../src/records/store.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const entry = (revision: string, n: number): Reconciliation => ({
  revision,
  time: new Date(Date.UTC(2030, 0, 1, 0, 0, n)).toISOString(),
  durationMs: 1,
  result: "applied",
  counts: { created: 0, updated: 1, deleted: 0, unchanged: 0, failed: 0 },
});

describe("records/store: compare-and-swap and apply leases", () => {
  let server: KubeServer;
  let a: RecordStore;
  let b: RecordStore;
  const open = () =>
    KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test", retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  const stored = () => server.get("v1", "ConfigMap", "vc-system", recordName("src", "c"));
  const fold = (revision: string, n: number) => (prev: ClusterStatus | undefined) =>
    record(prev, "c", "vc-c", entry(revision, n));

  beforeEach(async () => {
    server = await startKubeServer();
    a = new RecordStore(open(), "vc-system");
    b = new RecordStore(open(), "vc-system");
    await a.writeInventory("src", "c", "vc-c", ["Namespace//vc-c"]);
  });
  afterEach(async () => {
    await a.releaseAll();
    await b.releaseAll();
    a.client.close();
    b.client.close();
    await server.close();
  });

  it("two writers folding 20 runs each into one status at once: every entry kept, each once", async () => {
    const runs = async (store: RecordStore, prefix: string, from: number) => {
      for (let i = 0; i < 20; i++) await store.updateStatus("src", "c", "vc-c", fold(`${prefix}${i}`, from + i), 40);
    };
    await Promise.all([runs(a, "x", 0), runs(b, "y", 100)]);
    const rec = (await new RecordStore(open(), "vc-system").read("src", "c"))!;
    const all = await a.history("src", rec.status!);
    expect(all).to.have.length(40);
    expect(new Set(all.map((e) => e.revision)).size).to.equal(40);
    // Conflicts happened and were folded again, not written over.
    expect(server.requests.filter((r) => r.method === "PATCH" && r.status === 409).length).to.be.greaterThan(0);
  });

  it("a claim on the version the plan saw: stale once the record changed, claimed on the new one", async () => {
    const seen = (await a.read("src", "c"))!.resourceVersion!;
    await b.updateStatus("src", "c", "vc-c", fold("y", 1), 40);
    expect(await a.claim("src", "c", "vc-c", { basedOn: seen })).to.deep.equal({ state: "stale" });
    const now = (await b.read("src", "c"))!.resourceVersion!;
    expect((await a.claim("src", "c", "vc-c", { basedOn: now, add: ["v1/ConfigMap/vc-c/x"] })).state).to.equal(
      "claimed",
    );
    const cm = stored()!;
    expect(JSON.parse(cm.metadata.annotations![APPLYING_ANNOTATION]!).holder).to.equal(a.runId);
    expect(JSON.parse((cm.data as Record<string, string>).inventory!)).to.deep.equal([
      "Namespace//vc-c",
      "v1/ConfigMap/vc-c/x",
    ]);
    // The status write gives the lease up.
    await a.updateStatus("src", "c", "vc-c", fold("x", 2), 40);
    expect(stored()!.metadata.annotations?.[APPLYING_ANNOTATION]).to.equal(undefined);
  });

  it("busy while another run's lease is live, after waiting for it; claimed once it is given up", async () => {
    expect((await a.claim("src", "c", "vc-c", {})).state).to.equal("claimed");
    const busy = await b.claim("src", "c", "vc-c", { waitMs: 300 });
    expect(busy.state).to.equal("busy");
    const waited: string[] = [];
    const claiming = b.claim("src", "c", "vc-c", { waitMs: 10_000, onWait: (l) => waited.push(l.holder) });
    await new Promise((r) => setTimeout(r, 200));
    await a.release("src", "c");
    expect((await claiming).state).to.equal("claimed");
    expect(waited).to.deep.equal([a.runId]);
  });

  it("takes over the lease of a run whose process on this machine is gone, and records over it", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid!;
    const lease: ApplyLease = {
      holder: `${hostname()}/${dead}/dead`,
      host: hostname(),
      pid: dead,
      via: "vc apply",
      revision: "a".repeat(40),
      renewTime: new Date().toISOString(),
      durationSeconds: 15,
    };
    const cm = stored()!;
    server.put({ ...cm, metadata: { ...cm.metadata, annotations: { [APPLYING_ANNOTATION]: leaseText(lease) } } });
    const seen: Array<ApplyLease | undefined> = [];
    await a.updateStatus(
      "src",
      "c",
      "vc-c",
      (prev, s) => {
        seen.push(s.gone);
        return fold("x", 1)(prev);
      },
      40,
    );
    expect(seen.map((l) => l?.holder)).to.deep.equal([lease.holder]);
    expect(stored()!.metadata.annotations?.[APPLYING_ANNOTATION]).to.equal(undefined);
  });

  it("a run that lost its lease to another: its writes are fenced and its status is not written", async () => {
    expect((await a.claim("src", "c", "vc-c", {})).state).to.equal("claimed");
    expect(a.writeDeadline("src", "c")).to.be.greaterThan(Date.now());
    // Another run takes the record's lease over (as after this run was frozen past the lease).
    const cm = stored()!;
    const theirs: ApplyLease = {
      holder: "elsewhere/1/x",
      host: "elsewhere",
      pid: 1,
      via: "the reconciler",
      renewTime: new Date().toISOString(),
      durationSeconds: 15,
    };
    server.put({ ...cm, metadata: { ...cm.metadata, annotations: { [APPLYING_ANNOTATION]: leaseText(theirs) } } });
    const err = await a.updateStatus("src", "c", "vc-c", fold("x", 1), 40).catch((e: unknown) => e as Error);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/lost its apply lease/);
    expect(stored()!.data).to.not.have.property("history");
  });
});
