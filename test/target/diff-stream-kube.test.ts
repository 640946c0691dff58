// `vc diff` of a whole fleet against a host, streamed (planFleetStreamed): up to FLEET_WIDE_READ_MAX clusters the live
// objects come from one LIST per kind for the fleet; above it from one LIST per kind per chunk, selecting the chunk's
// clusters from the watch cache, so memory stays bounded by the chunk. Either way the report is the one planning the
// fleet at once gives: drift, a removed cluster, an invalid one, a namespace claimed across chunks.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { loadDesired, loadDesiredIndex } from "../../src/target/desired.js";
import { applyFleet, planFleet, planFleetStreamed } from "../../src/target/fleet.js";
import { KubeClient } from "../../src/target/kube/client.js";
import { INVENTORY_TYPES, KubeTarget } from "../../src/target/kube/target.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { describeProfiles } from "../support/profiles.js";

const REV = "0123456789abcdef0123456789abcdef01234567";
const sorted = Array.from({ length: 9 }, (_, i) => fleetClusterName(i)).sort();

describeProfiles("target/fleet: a streamed diff against a host", (profile) => {
  let tmp: string;
  let repo: string;
  let server: KubeServer;
  const target = () => new KubeTarget(KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test", retry: { baseDelayMs: 5, maxDelayMs: 20 } }));

  before(async function () {
    this.timeout(180_000);
    tmp = mkdtempSync(join(tmpdir(), "vc-diff-stream-kube-"));
    repo = join(tmp, "repo");
    server = await startKubeServer({ profile });
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-system" } });
    await generateFleet(repo, { clusters: 9, meshPerCluster: 1 });
    const applied = await applyFleet(target(), await loadDesired(repo, REV), { prune: true, allowMassPrune: false, dryRun: false });
    expect(applied.results.every((r) => r.ok)).to.equal(true);
    // Drift in one cluster, one folder removed, one invalid, and the first and last (in name order) claiming one namespace.
    const values = join(repo, "clusters", sorted[3]!, "values.yaml");
    writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, "cpu: 999m"));
    rmSync(join(repo, "clusters", sorted[5]!), { recursive: true });
    writeFileSync(join(repo, "clusters", sorted[6]!, "values.yaml"), "controlPlane: [not, a, mapping]\n");
    writeFileSync(join(repo, "clusters", sorted[8]!, "cluster.yaml"), `namespace: vc-${sorted[0]}\n`);
  });
  after(async () => {
    await server?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** The LISTs of live objects (inventory kinds, the records namespace aside) made while `run` ran. */
  async function inventoryLists(run: () => Promise<unknown>): Promise<Array<{ resource: string; query: string }>> {
    const plurals = new Set(INVENTORY_TYPES.map((t) => t.plural));
    const from = server.requests.length;
    await run();
    return server.requests
      .slice(from)
      .filter((r) => r.verb === "list" && plurals.has(r.resource ?? "") && r.namespace !== "vc-system" && decodeURIComponent(r.query).includes("vc.orch.io/inventory"))
      .map((r) => ({ resource: r.resource!, query: decodeURIComponent(r.query) }));
  }

  for (const prune of [false, true]) {
    it(`plans what planning the fleet at once plans, reading the live objects fleet-wide or chunk by chunk${prune ? " (--prune)" : ""}`, async () => {
      const opts = { prune, allowMassPrune: true, selected: [] };
      const whole = formatPlanReport(await planFleet(target(), await loadDesired(repo, REV), opts), "json");
      let fleetWide = "";
      let chunked = "";
      const wide = await inventoryLists(async () => (fleetWide = formatPlanReport(await planFleetStreamed(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, fleetWideMax: 100 }), "json")));
      const chunks = await inventoryLists(async () => (chunked = formatPlanReport(await planFleetStreamed(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, fleetWideMax: 1 }), "json")));
      expect(fleetWide).to.equal(whole);
      expect(chunked).to.equal(whole);
      expect(JSON.parse(chunked).clusters.map((c: { cluster: string }) => c.cluster)).to.include(sorted[3]);
      // Fleet-wide: one LIST per kind, selecting every labelled object.
      const kinds = new Set(wide.map((l) => l.resource));
      expect(wide).to.have.length(kinds.size);
      expect(wide.every((l) => !l.query.includes(" in ("))).to.equal(true);
      // Chunk by chunk: each LIST selects a chunk's clusters (at most 2 here), from the watch cache; no fleet-wide LIST of them.
      const selected = chunks.filter((l) => l.query.includes(" in ("));
      expect(selected.length).to.be.greaterThan(kinds.size);
      expect(selected.every((l) => l.query.includes("resourceVersion=0"))).to.equal(true);
      // The clusters with live objects and no valid folder (removed, invalid: more than a chunk here) too.
      const valid = new Set((await loadDesiredIndex(repo, REV)).valid);
      expect(sorted.filter((c) => !valid.has(c)).length).to.be.greaterThan(2);
      for (const l of selected) expect(/ in \(([^)]*)\)/.exec(l.query)![1]!.split(",").length, l.query).to.be.at.most(2);
      const bare = chunks.filter((l) => !l.query.includes(" in ("));
      // The claims' LISTs (Gateways, VirtualServices) select by label alone: they are fleet-wide by design.
      expect(new Set(bare.map((l) => l.resource)).size).to.be.at.most(2);
    });
  }

  it("reads the host's records once for the whole plan and checks each chunk's claims against their claimants alone", async () => {
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    // As a command names its source (records/prepare.ts): the records were written without an owner name.
    const t = target();
    t.source = "";
    const from = server.requests.length;
    const report = formatPlanReport(await planFleetStreamed(t, await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, fleetWideMax: 1 }), "json");
    const records = server.requests.slice(from).filter((r) => r.verb === "list" && r.namespace === "vc-system" && r.resource === "configmaps").map((r) => decodeURIComponent(r.query));
    // One LIST of every record for the run (the host's size, the removed clusters, the claims, each chunk's records).
    expect(records, records.join("\n")).to.have.length(1);
    expect(records[0]).to.not.match(/ in \(/);
    // The same report as without a source: no chunk's cluster or namespace is held by another record.
    expect(report).to.equal(formatPlanReport(await planFleet(target(), await loadDesired(repo, REV), opts), "json"));
  });

  it("reads chunk by chunk when the host holds more clusters than the bound, however few the repository's are", async () => {
    const index = await loadDesiredIndex(repo, REV);
    // 5 valid folders, 9 clusters recorded on the host (a removed, an invalid and two contesting one namespace besides).
    expect(index.valid.length).to.equal(5);
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    let report = "";
    const lists = await inventoryLists(async () => (report = formatPlanReport(await planFleetStreamed(target(), index, opts, { chunkSize: 2, fleetWideMax: 7 }), "json")));
    expect(report).to.equal(formatPlanReport(await planFleet(target(), await loadDesired(repo, REV), opts), "json"));
    const wideKinds = lists.filter((l) => !l.query.includes(" in (")).map((l) => l.resource);
    expect(wideKinds.every((r) => ["gateways", "virtualservices"].includes(r)), wideKinds.join(", ")).to.equal(true);
    expect(lists.filter((l) => l.query.includes(" in (")).length).to.be.greaterThan(0);
  });
});
