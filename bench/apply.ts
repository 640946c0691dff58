// Benchmark: the 1,000-cluster fleet applied to the API test server (objects/second), then a no-op `vc diff`
// (LIST requests per kind, exact; time against loading + rendering the fleet alone, measured in the same run).
// The test server runs in a child process (bench/apply-server.ts), as a real API server would: vc's times
// are vc's, not the in-memory server's.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { loadDesired, loadDesiredIndex, type DesiredState } from "../src/pipeline/load.js";
import { applyFleet } from "../src/pipeline/fleet.js";
import { fleetClusters } from "../src/pipeline/chunks.js";
import { planClusters } from "../src/pipeline/cluster.js";
import { KubeClient } from "../src/host/client.js";
import { KubeTarget, INVENTORY_TYPES } from "../src/sinks/kube/target.js";
import { hasChanges } from "../src/plan/build.js";
import { totalCounts } from "../src/plan/format.js";
import type { BenchContext } from "./run.js";
import { generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const RUNS = 3;
const REVISION = "0123456789abcdef0123456789abcdef01234567";
const fleetOpts = { prune: true, allowMassPrune: false };
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "apply-fleet");
  await generateFleet(root, { clusters: CLUSTERS, meshPerCluster: MESH });
  const server = await startServerProcess();
  const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
  const target = new KubeTarget(client);
  try {
    let desired: DesiredState = await loadDesired(root, REVISION);
    const objects = desired.clusters.reduce((n, c) => n + c.objects.length, 0);
    ctx.report("fleet", `${desired.clusters.length} clusters, ${objects} host objects`);

    // First full apply onto an empty host.
    const started = process.hrtime.bigint();
    const applied = await applyFleet(target, await loadDesiredIndex(root, REVISION), {
      prune: true,
      allowMassPrune: false,
      dryRun: false,
    });
    const applyMs = Number(process.hrtime.bigint() - started) / 1e6;
    const created = applied.results.reduce((n, r) => n + r.counts.created, 0);
    const failed = applied.results.reduce((n, r) => n + r.counts.failed, 0);
    ctx.report(
      "first apply",
      applyMs / 1000,
      "s",
      `${created} created, ${failed} failed, ${await server.countRequests({ method: "PATCH" })} PATCH requests`,
    );
    ctx.report("first apply throughput", (created / applyMs) * 1000, "objects/s", "test server in its own process");

    // The baseline: loading, validating and rendering the fleet alone.
    const renderMs = await ctx.median(RUNS, async () => {
      desired = await loadDesired(root, REVISION);
    });
    // A no-op `vc diff`: the same load + render, plus reading the live fleet and planning every cluster
    // (what planFleet does, timed by phase).
    let changed = -1;
    let unchanged = 0;
    const phases: { list: number[]; plan: number[] } = { list: [], plan: [] };
    await server.resetRequests();
    const diffMs = await ctx.median(RUNS, async () => {
      const d = await loadDesired(root, REVISION);
      const t0 = performance.now();
      const live = await target.listFleetInventory();
      const t1 = performance.now();
      const { clusters } = fleetClusters(d, live, fleetOpts, []);
      const { plans } = planClusters(clusters, fleetOpts);
      phases.list.push(t1 - t0);
      phases.plan.push(performance.now() - t1);
      changed = plans.filter(hasChanges).length;
      unchanged = totalCounts(plans).unchanged;
    });
    const lists = (await server.countRequests({ verb: "list" })) / RUNS;
    let maxPerKind = 0;
    for (const t of INVENTORY_TYPES)
      maxPerKind = Math.max(maxPerKind, (await server.countRequests({ verb: "list", resource: t.plural })) / RUNS);
    let writes = 0;
    for (const method of ["PATCH", "PUT", "POST", "DELETE"]) writes += await server.countRequests({ method });
    const all = (await server.countRequests({})) / RUNS;
    ctx.report("no-op diff: clusters with changes", changed, "", `${unchanged} objects unchanged`);
    ctx.report(
      "no-op diff: LIST requests",
      lists,
      "",
      `${INVENTORY_TYPES.length} kinds, at most ${maxPerKind} per kind (pages of 5,000); ${writes} writes; ${all} ` +
        `requests in all per run`,
    );
    ctx.report("load+validate+render fleet (baseline)", renderMs, "ms", `median of ${RUNS}`);
    ctx.report("no-op vc diff (load+render+LIST+plan)", diffMs, "ms", `median of ${RUNS}`);
    ctx.report("  of which LIST (read the live fleet)", med(phases.list), "ms", `median of ${RUNS}`);
    ctx.report("  of which plan (every object compared)", med(phases.plan), "ms", `median of ${RUNS}`);
    ctx.report("no-op diff / load+validate+render alone", diffMs / renderMs, "x", "target: at most 3x");
  } finally {
    await target.close();
    await server.close();
  }
}

/** The child-process test server: its URL and kubeconfig, and request counts over a JSON-lines pipe. */
async function startServerProcess() {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "apply-server.ts")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error("the test server process ended");
    return JSON.parse(value as string) as Record<string, unknown>;
  };
  const ask = async (msg: object) => {
    child.stdin!.write(`${JSON.stringify(msg)}\n`);
    return next();
  };
  const hello = (await next()) as { url: string; kubeconfigPath: string };
  return {
    url: hello.url,
    kubeconfigPath: hello.kubeconfigPath,
    countRequests: async (filter: { method?: string; verb?: string; resource?: string }) =>
      (await ask({ op: "count", filter })).count as number,
    resetRequests: async () => void (await ask({ op: "reset" })),
    close: async () => {
      child.stdin!.write(`${JSON.stringify({ op: "close" })}\n`);
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}
