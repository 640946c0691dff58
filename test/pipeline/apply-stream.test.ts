// `vc apply` of a whole fleet a chunk at a time (applyFleet, chunks of 2) leaves the host as applying the fleet as one
// chunk does and reports the same: drift, an invalid folder, one suspended in cluster.yaml, a namespace
// claimed across chunks, a removed cluster, a new public host claimed in two chunks, a cluster another source holds.
import { expect } from "chai";
import { load } from "js-yaml";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import type { KubeObject } from "../../src/kube/object.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { applyFleet, type FleetApplyReport } from "../../src/pipeline/fleet.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { KubeClient } from "../../src/host/client.js";
import { INVENTORY_TYPES, KubeTarget } from "../../src/sinks/kube/target.js";
import { prepareRecords } from "../../src/pipeline/prepare.js";
import type { SyncResult } from "../../src/plan/types.js";
import type { Target } from "../../src/sinks/types.js";
import { toJson, toText } from "../../src/cli/apply-report.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";

const REV = "0123456789abcdef0123456789abcdef01234567";
const sorted = Array.from({ length: 9 }, (_, i) => fleetClusterName(i)).sort();

/** Both reports as the command prints them, durations and the records' times aside (each host has its own clock). */
function printed(report: FleetApplyReport): { text: string; json: string } {
  const since = (s: string) => s.replace(/since \d{4}-\d\d-\d\dT[\d:.]+Z/g, "since (time)");
  const json = JSON.stringify(toJson(report, false), (k, v) => (k === "durationMs" ? 0 : v), 2);
  return { text: since(toText(report, false, false)), json: since(json) };
}

/**
 * The streamed run, with each chunk's whole results (the report keeps a compact copy of each) put back for printing.
 */
async function streamed(
  target: Target,
  repo: string,
  opts: { prune: boolean; owner?: string },
  chunk: number,
): Promise<FleetApplyReport> {
  const whole: SyncResult[] = [];
  const report = await applyFleet(
    target,
    await loadDesiredIndex(repo, REV),
    { ...opts, allowMassPrune: true, dryRun: false },
    { chunkSize: chunk, onChunk: (o) => void whole.push(...o.filter((x) => x.state === "synced").map((x) => x.sync!)) },
  );
  expect(report.results.map((r) => r.cluster)).to.deep.equal(whole.map((r) => r.cluster));
  expect(
    report.results.every((r) => r.results.length === 0 && r.plan.changes.length === 0),
    "the report lets the objects go",
  ).to.equal(true);
  return { ...report, results: whole };
}

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile())
      out.set(relative(dir, join(e.parentPath, e.name)), readFileSync(join(e.parentPath, e.name), "utf8"));
  }
  return out;
}

describe("pipeline/fleet: a streamed apply", function () {
  this.timeout(180_000);
  let tmp: string;
  let repo: string;

  beforeEach(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-apply-stream-"));
    repo = join(tmp, "repo");
    await generateFleet(repo, { clusters: 9, meshPerCluster: 1 });
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  /**
   * Drift in one cluster, one folder removed, one invalid, one suspended, and the first and last claiming one
   * namespace.
   */
  function change(): void {
    const values = join(repo, "clusters", sorted[3]!, "values.yaml");
    writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, "cpu: 999m"));
    rmSync(join(repo, "clusters", sorted[5]!), { recursive: true });
    writeFileSync(join(repo, "clusters", sorted[6]!, "values.yaml"), "controlPlane: [not, a, mapping]\n");
    writeFileSync(join(repo, "clusters", sorted[7]!, "cluster.yaml"), `namespace: vc-${sorted[7]}\nsuspend: true\n`);
    writeFileSync(join(repo, "clusters", sorted[8]!, "cluster.yaml"), `namespace: vc-${sorted[0]}\n`);
  }

  for (const prune of [false, true]) {
    it(
      `on dir: writes the same files and reports the same as applying the fleet at ` +
        `once${prune ? " (--prune)" : ""}`,
      async () => {
        const base = join(tmp, "base");
        await applyFleet(new DirTarget(base), await loadDesiredIndex(repo, REV), {
          prune: true,
          allowMassPrune: false,
          dryRun: false,
        });
        change();
        cpSync(base, join(tmp, "whole"), { recursive: true });
        cpSync(base, join(tmp, "streamed"), { recursive: true });
        const opts = { prune, allowMassPrune: true, dryRun: false };
        const whole = await applyFleet(new DirTarget(join(tmp, "whole")), await loadDesiredIndex(repo, REV), opts, {
          chunkSize: Number.MAX_SAFE_INTEGER,
          keepResults: true,
        });
        const chunked = await streamed(new DirTarget(join(tmp, "streamed")), repo, opts, 2);
        expect(printed(chunked)).to.deep.equal(printed(whole));
        expect(files(join(tmp, "streamed"))).to.deep.equal(files(join(tmp, "whole")));
        // What the fleet has: the drifted cluster updated, the removed one pruned only with --prune, the rest left
        // alone.
        expect(whole.results.find((r) => r.cluster === sorted[3])!.counts.updated).to.be.greaterThan(0);
        expect(whole.results.some((r) => r.cluster === sorted[5])).to.equal(prune);
        expect(whole.suspended).to.deep.equal([sorted[7]]);
        expect(whole.errors.map((e) => e.cluster).sort()).to.deep.equal([sorted[0], sorted[6], sorted[8]].sort());
      },
    );
  }

  describe("on a live host", () => {
    let servers: KubeServer[];
    beforeEach(async () => (servers = [await startKubeServer(), await startKubeServer()]));
    afterEach(async () => {
      for (const s of servers) await s.close();
    });

    const targetOf = (s: KubeServer) =>
      new KubeTarget(
        KubeClient.open({ kubeconfig: s.kubeconfigPath, context: "test", retry: { baseDelayMs: 5, maxDelayMs: 20 } }),
      );

    /** Every object of the kinds vc applies, records included, without what the server sets on its own. */
    function hostState(s: KubeServer): KubeObject[] {
      return INVENTORY_TYPES.flatMap((t) => s.list(t.group ? `${t.group}/${t.version}` : t.version, t.kind)).map(
        (o) => {
          const {
            resourceVersion: _r,
            uid: _u,
            creationTimestamp: _c,
            managedFields: _m,
            generation: _g,
            ...metadata
          } = o.metadata as Record<string, unknown>;
          // Cluster IPs are handed out in the order Services arrive, which concurrent writes do not fix.
          const spec =
            o.kind === "Service" ? { ...(o.spec as Record<string, unknown>), clusterIP: "", clusterIPs: [] } : o.spec;
          return { ...o, metadata, ...(spec ? { spec } : {}) } as KubeObject;
        },
      );
    }

    it(
      "changes the host as applying the fleet at once does: ownership, a new public host claimed in two chunks, a " +
        "removed cluster",
      async () => {
        const gateway = (i: number) => join(repo, "clusters", sorted[i]!, "mesh", "gateway.yaml");
        for (const s of servers) {
          // One cluster held by another source first, then the fleet as it was under this source (that one refused).
          const other = await runVc([
            "apply",
            repo,
            "--target",
            "kube",
            "--kubeconfig",
            s.kubeconfigPath,
            "--context",
            "test",
            "--owner",
            "other",
            "--cluster",
            sorted[2]!,
          ]);
          expect(other.code, other.stderr).to.equal(0);
          const first = await runVc([
            "apply",
            repo,
            "--target",
            "kube",
            "--kubeconfig",
            s.kubeconfigPath,
            "--context",
            "test",
            "--owner",
            "mine",
          ]);
          expect(first.code, first.stdout).to.equal(1);
          expect(first.stdout).to.include(`is held by source other`);
        }
        change();
        // Two clusters of different chunks claim a public host nobody serves yet: neither claim is older, both refused.
        for (const i of [1, 4])
          writeFileSync(
            gateway(i),
            readFileSync(gateway(i), "utf8").replace(/s\d{4}\.example\.com/, "shared.example.com"),
          );
        const reports: FleetApplyReport[] = [];
        for (const [i, s] of servers.entries()) {
          const target = targetOf(s);
          try {
            const index = await loadDesiredIndex(repo, REV);
            await prepareRecords(target, index.state, "mine");
            reports.push(
              i === 0
                ? await applyFleet(
                    target,
                    index,
                    { prune: true, allowMassPrune: true, dryRun: false, owner: "mine" },
                    { chunkSize: Number.MAX_SAFE_INTEGER, keepResults: true },
                  )
                : await streamed(target, repo, { prune: true, owner: "mine" }, 2),
            );
          } finally {
            await target.close();
          }
        }
        const [whole, chunked] = reports as [FleetApplyReport, FleetApplyReport];
        expect(printed(chunked).text).to.equal(printed(whole).text);
        expect(printed(chunked).json).to.equal(printed(whole).json);
        // The records' statuses carry the time of the (earlier, identical) runs that wrote them: each host has its own.
        const state = (s: KubeServer) =>
          JSON.stringify(hostState(s), null, 1)
            .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "(time)")
            .replace(/(durationMs\\?":)\d+/g, "$1 0")
            .split("\n");
        expect(state(servers[1]!)).to.deep.equal(state(servers[0]!));
        for (const i of [1, 4])
          expect(whole.results.find((r) => r.cluster === sorted[i])!.plan.blocked).to.match(
            /public host "shared\.example\.com" belongs to cluster/,
          );
        expect(whole.results.find((r) => r.cluster === sorted[5])!.counts.deleted).to.be.greaterThan(0);
        expect(whole.results.find((r) => r.cluster === sorted[2])!.plan.ownerConflict).to.deep.equal(["other"]);
      },
    );
  });

  it(
    "a first vc apply on a host costs each cluster one apply per object, one GET of its namespace (is it someone " +
      "else's) and its record's two writes (created with the run's lease, then its status): no GET of a record, no " +
      "migration GET",
    async () => {
      const server = await startKubeServer();
      // The records namespace exists, as where the reconciler is deployed.
      server.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
      });
      try {
        const res = await runVc([
          "apply",
          repo,
          "--target",
          "kube",
          "--kubeconfig",
          server.kubeconfigPath,
          "--context",
          "test",
        ]);
        expect(res.code, res.stdout + res.stderr).to.equal(0);
        const objects = Number(/^(\d+) created/m.exec(res.stdout)?.[1]);
        expect(objects).to.be.greaterThan(9 * 10);
        const records = (r: { namespace?: string; resource?: string }) =>
          r.namespace === "vc-system" && r.resource === "configmaps";
        const gets = server.requests.filter((r) => r.verb === "get");
        expect(gets.filter(records), "GETs of a record").to.deep.equal([]);
        // The namespace of each cluster once (the foreign-object check), and the records namespace once (its platform
        // mark verified); cluster-scoped objects of a cluster are looked up one by one (the metrics proxy's ClusterRole
        // and binding), nothing else.
        expect(
          gets
            .filter((r) => r.resource === "namespaces")
            .map((r) => r.name)
            .sort(),
        ).to.deep.equal([...sorted.map((c) => `vc-${c}`), "vc-system"].sort());
        const objectGets = gets.filter((r) => r.resource !== undefined);
        expect(
          objectGets.every((r) => ["namespaces", "clusterroles", "clusterrolebindings"].includes(r.resource!)),
          objectGets.map((r) => r.path).join("\n"),
        ).to.equal(true);
        // Each record: created with the run's apply lease and what it will create (POST), then its status (PATCH).
        expect(server.requests.filter((r) => records(r) && r.method === "POST")).to.have.length(9);
        expect(server.requests.filter((r) => records(r) && r.method === "PATCH")).to.have.length(9);
        expect(server.requests.filter((r) => !records(r) && r.method === "PATCH")).to.have.length(objects);
      } finally {
        await server.close();
      }
    },
  );

  it(
    "vc apply of a fleet larger than one chunk: the same output and files as applying every cluster by name (not " +
      "streamed), and nothing left to diff",
    async () => {
      await generateFleet(repo, { clusters: 101, meshPerCluster: 1 });
      const all = readdirSync(join(repo, "clusters")).sort();
      const chunked = await runVc(["apply", repo, "--target", `dir:${join(tmp, "streamed")}`]);
      const named = await runVc([
        "apply",
        repo,
        "--target",
        `dir:${join(tmp, "named")}`,
        ...all.flatMap((c) => ["--cluster", c]),
      ]);
      expect(chunked.code, chunked.stderr).to.equal(0);
      expect(chunked.stdout).to.equal(named.stdout);
      expect(chunked.stdout).to.match(/^recorded 101 cluster\(s\) at revision/m);
      const strip = (m: Map<string, string>) => new Map([...m].filter(([f]) => !f.startsWith(".vc-status/")));
      expect(strip(files(join(tmp, "streamed")))).to.deep.equal(strip(files(join(tmp, "named"))));
      // Progress past the first chunk names the clusters done.
      expect(chunked.stderr).to.match(/progress: \d+\/\d+ objects \(\d+%\), cluster \S+, 100\/101 clusters done/);
      const diff = await runVc(["diff", repo, "--target", `dir:${join(tmp, "streamed")}`, "--exit-code"]);
      expect(diff.code, diff.stdout).to.equal(0);
      // The JSON report too, durations aside.
      for (const d of ["streamed", "named"]) rmSync(join(tmp, d), { recursive: true });
      const zero = (s: string) => JSON.stringify(JSON.parse(s), (k, v) => (k === "durationMs" ? 0 : v));
      const jsonChunked = await runVc(["apply", repo, "--target", `dir:${join(tmp, "streamed")}`, "-o", "json"]);
      const jsonNamed = await runVc([
        "apply",
        repo,
        "--target",
        `dir:${join(tmp, "named")}`,
        "-o",
        "json",
        ...all.flatMap((c) => ["--cluster", c]),
      ]);
      expect(zero(jsonChunked.stdout)).to.equal(zero(jsonNamed.stdout));
      expect(jsonChunked.stdout.replace(/"durationMs": \d+/g, "")).to.equal(
        jsonNamed.stdout.replace(/"durationMs": \d+/g, ""),
      );
      // And the YAML report, written as the chunks end: the same bytes as the whole document, the same data as JSON.
      for (const d of ["streamed", "named"]) rmSync(join(tmp, d), { recursive: true });
      const yamlChunked = await runVc(["apply", repo, "--target", `dir:${join(tmp, "streamed")}`, "-o", "yaml"]);
      const yamlNamed = await runVc([
        "apply",
        repo,
        "--target",
        `dir:${join(tmp, "named")}`,
        "-o",
        "yaml",
        ...all.flatMap((c) => ["--cluster", c]),
      ]);
      expect(yamlChunked.code, yamlChunked.stderr).to.equal(0);
      expect(yamlChunked.stdout.replace(/durationMs: \d+/g, "")).to.equal(
        yamlNamed.stdout.replace(/durationMs: \d+/g, ""),
      );
      expect(JSON.parse(zero(JSON.stringify(load(yamlChunked.stdout))))).to.deep.equal(
        JSON.parse(zero(jsonChunked.stdout)),
      );
    },
  );
});

describe("vc apply -o yaml of a fleet with nothing applied", function () {
  this.timeout(60_000);
  it("says clusters: [] before its other keys, as the whole document would", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-apply-yaml-"));
    try {
      const repo = join(tmp, "repo");
      await generateFleet(repo, { clusters: 2, meshPerCluster: 1 });
      // Both clusters invalid: the run applies nothing and reports the errors.
      for (const c of readdirSync(join(repo, "clusters")))
        writeFileSync(join(repo, "clusters", c, "values.yaml"), "sync: [not, a, map]\n");
      const res = await runVc(["apply", repo, "--target", `dir:${join(tmp, "out")}`, "-o", "yaml"]);
      expect(res.stdout).to.match(/^clusters: \[\]\ndryRun: false\nerrors:\n/);
      const data = load(res.stdout) as { clusters: unknown[]; errors: Array<{ cluster: string }> };
      expect(data.clusters).to.deep.equal([]);
      expect(data.errors.map((e) => e.cluster).sort()).to.deep.equal(readdirSync(join(repo, "clusters")).sort());
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
