// Benchmark: the 1,000-cluster fleet applied to the API test server (objects/second), then a no-op `vc diff`
// (LIST requests per kind, exact; time against loading + rendering the fleet alone, measured in the same run).
import { join } from "node:path";
import { startKubeServer } from "../test/support/kube-server/index.js";
import { loadDesired, type DesiredState } from "../src/target/desired.js";
import { applyFleet, fleetClusters, planClusters, readLive } from "../src/target/fleet.js";
import { KubeClient } from "../src/target/kube/client.js";
import { KubeTarget, INVENTORY_TYPES } from "../src/target/kube/target.js";
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
  const server = await startKubeServer();
  const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
  const target = new KubeTarget(client);
  try {
    let desired: DesiredState = await loadDesired(root, REVISION);
    const objects = desired.clusters.reduce((n, c) => n + c.objects.length, 0);
    ctx.report("fleet", `${desired.clusters.length} clusters, ${objects} host objects`);

    // First full apply onto an empty host.
    const started = process.hrtime.bigint();
    const applied = await applyFleet(target, desired, { prune: true, allowMassPrune: false, dryRun: false });
    const applyMs = Number(process.hrtime.bigint() - started) / 1e6;
    const created = applied.results.reduce((n, r) => n + r.counts.created, 0);
    const failed = applied.results.reduce((n, r) => n + r.counts.failed, 0);
    ctx.report("first apply", applyMs / 1000, "s", `${created} created, ${failed} failed, ${server.countRequests({ method: "PATCH" })} PATCH requests`);
    ctx.report("first apply throughput", (created / applyMs) * 1000, "objects/s", "client and test server share one process");

    // The baseline: loading, validating and rendering the fleet alone.
    const renderMs = await ctx.median(RUNS, async () => {
      desired = await loadDesired(root, REVISION);
    });
    // A no-op `vc diff`: the same load + render, plus reading the live fleet and planning every cluster
    // (what planFleet does, timed by phase).
    let changed = -1;
    let unchanged = 0;
    const phases: { list: number[]; plan: number[] } = { list: [], plan: [] };
    server.resetRequests();
    const diffMs = await ctx.median(RUNS, async () => {
      const d = await loadDesired(root, REVISION);
      const t0 = performance.now();
      const live = await readLive(target, d, fleetOpts);
      const t1 = performance.now();
      const { clusters } = fleetClusters(d, live, fleetOpts);
      const { plans } = planClusters(clusters, fleetOpts);
      phases.list.push(t1 - t0);
      phases.plan.push(performance.now() - t1);
      changed = plans.filter(hasChanges).length;
      unchanged = totalCounts(plans).unchanged;
    });
    const lists = server.countRequests({ verb: "list" }) / RUNS;
    const maxPerKind = Math.max(...INVENTORY_TYPES.map((t) => server.countRequests({ verb: "list", resource: t.plural }))) / RUNS;
    const writes = ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + server.countRequests({ method }), 0);
    ctx.report("no-op diff: clusters with changes", changed, "", `${unchanged} objects unchanged`);
    ctx.report("no-op diff: LIST requests", lists, "", `${INVENTORY_TYPES.length} kinds, at most ${maxPerKind} per kind (pages of 5,000); ${writes} writes; ${server.requests.length / RUNS} requests in all per run`);
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
