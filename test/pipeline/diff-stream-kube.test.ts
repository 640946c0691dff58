// `vc diff` of a whole fleet against a host, streamed (planFleet, chunks of 2): the live objects come from one paged
// LIST per kind for the whole fleet, from the store, handed out a chunk at a time in the store's order
// (FleetInventoryReader); or, as `vc apply` reads them, from one LIST per kind per chunk, selecting the chunk's
// clusters from the watch cache. Either way the report is the one planning the fleet at once gives: drift, a removed
// cluster, an invalid one, a namespace claimed across chunks; and when the fleet's LISTs cannot be used to the end (a
// continue token expired, a server listing out of its key order) the rest is read chunk by chunk, to the same report.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { applyFleet, planFleet } from "../../src/pipeline/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { INVENTORY_TYPES, KubeTarget } from "../../src/sinks/kube/target.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { describeProfiles } from "../support/profiles.js";

const REV = "0123456789abcdef0123456789abcdef01234567";
const sorted = Array.from({ length: 9 }, (_, i) => fleetClusterName(i)).sort();

describeProfiles("pipeline/fleet: a streamed diff against a host", (profile) => {
  let tmp: string;
  let repo: string;
  let server: KubeServer;
  const target = () =>
    new KubeTarget(
      KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        retry: { baseDelayMs: 5, maxDelayMs: 20 },
      }),
    );

  before(async function () {
    this.timeout(180_000);
    tmp = mkdtempSync(join(tmpdir(), "vc-diff-stream-kube-"));
    repo = join(tmp, "repo");
    server = await startKubeServer({ profile });
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    await generateFleet(repo, { clusters: 9, meshPerCluster: 1 });
    const applied = await applyFleet(target(), await loadDesiredIndex(repo, REV), {
      prune: true,
      allowMassPrune: false,
      dryRun: false,
    });
    expect(applied.results.every((r) => r.ok)).to.equal(true);
    // Drift in one cluster, one folder removed, one invalid, and the first and last (in name order) claiming one
    // namespace.
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
      .filter(
        (r) =>
          r.verb === "list" &&
          plurals.has(r.resource ?? "") &&
          r.namespace !== "vc-system" &&
          decodeURIComponent(r.query).includes("vc.orch.io/inventory"),
      )
      .map((r) => ({ resource: r.resource!, query: decodeURIComponent(r.query) }));
  }

  /** The LIST pages asked for, by resource: each page's query. */
  const pagesOf = (lists: Array<{ resource: string; query: string }>) =>
    lists.filter((l) => l.query.includes("limit="));

  for (const prune of [false, true]) {
    it(
      `plans what planning the fleet at once plans, reading the live objects fleet-wide or chunk by ` +
        `chunk${prune ? " (--prune)" : ""}`,
      async () => {
        const opts = { prune, allowMassPrune: true, selected: [] };
        const whole = formatPlanReport(
          await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: Number.MAX_SAFE_INTEGER }),
          "json",
        );
        let fleetWide = "";
        let chunked = "";
        const fellBack: string[] = [];
        const wide = await inventoryLists(
          async () =>
            (fleetWide = formatPlanReport(
              await planFleet(target(), await loadDesiredIndex(repo, REV), opts, {
                chunkSize: 2,
                pageSize: 2,
                onFallBack: (why) => fellBack.push(why),
              }),
              "json",
            )),
        );
        const chunks = await inventoryLists(
          async () =>
            (chunked = formatPlanReport(
              await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, liveReads: "chunk" }),
              "json",
            )),
        );
        expect(fleetWide).to.equal(whole);
        expect(chunked).to.equal(whole);
        expect(fellBack).to.deep.equal([]);
        expect(JSON.parse(chunked).clusters.map((c: { cluster: string }) => c.cluster)).to.include(sorted[3]);
        // Fleet-wide: one LIST per kind (the claims' kinds have a LIST of their own besides), followed page by page,
        // from the store.
        const paged = pagesOf(wide);
        const starts = new Map<string, number>();
        for (const l of paged.filter((l) => !l.query.includes("continue=")))
          starts.set(l.resource, (starts.get(l.resource) ?? 0) + 1);
        for (const [resource, n] of starts)
          expect(n, resource).to.be.at.most(["gateways", "virtualservices"].includes(resource) ? 2 : 1);
        expect(starts.get("statefulsets")).to.equal(1);
        expect(paged.filter((l) => l.resource === "statefulsets").length, "9 StatefulSets, 2 a page").to.be.at.least(4);
        expect(paged.every((l) => !l.query.includes(" in (") && !l.query.includes("resourceVersion=0"))).to.equal(true);
        // Only the removed cluster (live objects, no folder) is read by name, with --prune; the invalid folder's
        // objects are not read.
        const named = wide.filter((l) => l.query.includes(" in ("));
        expect(
          named.every((l) => / in \(([^)]*)\)/.exec(l.query)![1] === sorted[5]),
          named.map((l) => l.query).join("\n"),
        ).to.equal(true);
        // Chunk by chunk: each LIST selects a chunk's clusters (at most 2 here), from the watch cache; no fleet-wide
        // LIST of them.
        const kinds = new Set(paged.map((l) => l.resource));
        const selected = chunks.filter((l) => l.query.includes(" in ("));
        expect(selected.length).to.be.greaterThan(kinds.size);
        expect(selected.every((l) => l.query.includes("resourceVersion=0"))).to.equal(true);
        for (const l of selected)
          expect(/ in \(([^)]*)\)/.exec(l.query)![1]!.split(",").length, l.query).to.be.at.most(2);
        const bare = chunks.filter((l) => !l.query.includes(" in ("));
        // The claims' LISTs (Gateways, VirtualServices) select by label alone: they are fleet-wide by design.
        expect(new Set(bare.map((l) => l.resource)).size).to.be.at.most(2);
      },
    );
  }

  it("reads the rest chunk by chunk, to the same report, when a continue token expires between two pages", async () => {
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    const whole = formatPlanReport(
      await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: Number.MAX_SAFE_INTEGER }),
      "json",
    );
    const expired = server.faults.add({ method: "GET", path: "/apis/apps/v1/statefulsets", nth: 2, status: 410 });
    const fellBack: string[] = [];
    try {
      let report = "";
      const lists = await inventoryLists(
        async () =>
          (report = formatPlanReport(
            await planFleet(target(), await loadDesiredIndex(repo, REV), opts, {
              chunkSize: 2,
              pageSize: 2,
              onFallBack: (why) => fellBack.push(why),
            }),
            "json",
          )),
      );
      expect(expired.fired).to.equal(1);
      expect(report).to.equal(whole);
      expect(fellBack).to.have.length(1);
      expect(fellBack[0]).to.match(/continue token expired/);
      expect(
        lists.filter((l) => l.query.includes(" in (") && l.query.includes("resourceVersion=0")).length,
        "the chunks after the expiry, by name",
      ).to.be.greaterThan(0);
    } finally {
      expired.remove();
    }
  });

  it("plans the fleet again chunk by chunk, to the same report, when a server lists out of its key order", async () => {
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    const whole = formatPlanReport(
      await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: Number.MAX_SAFE_INTEGER }),
      "json",
    );
    // No server here lists out of order: a client that reverses each page of StatefulSets stands in for one.
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    const page = client.listPage.bind(client);
    client.listPage = async (type, o, cont) => {
      const read = await page(type, o, cont);
      return type.kind === "StatefulSet" ? { ...read, items: [...read.items].reverse() } : read;
    };
    const fellBack: string[] = [];
    const report = formatPlanReport(
      await planFleet(new KubeTarget(client), await loadDesiredIndex(repo, REV), opts, {
        chunkSize: 2,
        pageSize: 3,
        onFallBack: (why) => fellBack.push(why),
      }),
      "json",
    );
    expect(report).to.equal(whole);
    expect(fellBack).to.have.length(1);
    expect(fellBack[0]).to.match(/key order/);
  });

  for (const liveReads of ["fleet", "chunk"] as const)
    it(
      `reads the host's records once for the whole plan and checks each chunk's claims against their claimants ` +
        `alone (live objects read by ${liveReads})`,
      async () => {
        const opts = { prune: true, allowMassPrune: true, selected: [] };
        // As a command names its source (pipeline/prepare.ts): the records were written without an owner name.
        const t = target();
        t.source = "";
        const from = server.requests.length;
        const report = formatPlanReport(
          await planFleet(t, await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, liveReads }),
          "json",
        );
        const records = server.requests
          .slice(from)
          .filter((r) => r.verb === "list" && r.namespace === "vc-system" && r.resource === "configmaps")
          .map((r) => decodeURIComponent(r.query));
        // One LIST of every record for the run (the host's size, the removed clusters, the claims, each chunk's
        // records).
        expect(records, records.join("\n")).to.have.length(1);
        expect(records[0]).to.not.match(/ in \(/);
        // The same report as without a source: no chunk's cluster or namespace is held by another record.
        expect(report).to.equal(
          formatPlanReport(
            await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: Number.MAX_SAFE_INTEGER }),
            "json",
          ),
        );
      },
    );
});
