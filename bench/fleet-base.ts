// Benchmark: the plan of a base change (fleet/values.yaml) over a 1,000-cluster fleet, as vc diff -o markdown makes it
// against the hydrated manifests of the base branch, against a full `vc render` of the same fleet. Target: ≤ 2×.
// Figures are CPU time (user + system, of every thread of this process: the validation workers too), as the machine
// is shared; wall times are in the notes.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatPlanReport } from "../src/plan/format.js";
import { summariseFleet } from "../src/plan/fleet-summary.js";
import { renderSpecs } from "../src/render/fleet.js";
import { toYamlStream } from "../src/render/output.js";
import { loadDesiredIndex } from "../src/pipeline/load.js";
import { applyFleet, planFleet } from "../src/pipeline/fleet.js";
import { openTarget } from "../src/sinks/index.js";
import { loadAndValidate, validSpecs } from "../src/validate/index.js";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { KubeClient } from "../src/host/client.js";
import { KubeTarget } from "../src/sinks/kube/target.js";
import type { BenchContext } from "./run.js";
import { generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 3;
const RUNS = 3;
const REVISION = "0123456789abcdef0123456789abcdef01234567";
const base = (tag: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n`;

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "fleet-base");
  await generateFleet(root, { clusters: CLUSTERS, meshPerCluster: MESH });
  mkdirSync(join(root, "fleet"), { recursive: true });
  writeFileSync(join(root, "fleet/values.yaml"), base("1.0.0"));
  // The base branch, hydrated: what the pull-request plan compares with.
  const hydrated = join(root, "hydrated");
  rmSync(hydrated, { recursive: true, force: true });
  const target = await openTarget(`dir:${hydrated}`);
  await applyFleet(target, await loadDesiredIndex(root, REVISION), {
    prune: true,
    allowMassPrune: true,
    force: false,
    dryRun: false,
    clusterConcurrency: 4,
  });
  // The pull request: one line of the base.
  writeFileSync(join(root, "fleet/values.yaml"), base("1.1.0"));

  let objects = 0;
  const render = async (): Promise<void> => {
    const fleet = renderSpecs(validSpecs(await loadAndValidate(root)), REVISION);
    objects = fleet.clusters.reduce((n, c) => n + c.objects.length, 0);
    toYamlStream(fleet.clusters.flatMap((c) => c.objects));
  };
  let last: Awaited<ReturnType<typeof planFleet>> | undefined;
  const plan = async (): Promise<void> => {
    last = await planFleet(target, await loadDesiredIndex(root, REVISION), { prune: true, allowMassPrune: false });
    formatPlanReport(last, "markdown");
  };
  // The parts: reading the hydrated base branch (the dir: target's I/O), and the fleet summary this change adds.
  const readLive = async (): Promise<void> => void (await target.listFleetInventory());
  const summarise = (): void => void summariseFleet(last!.plans);
  await render();
  await plan();
  const renders: number[] = [];
  const plans: number[] = [];
  const reads: number[] = [];
  const summaries: number[] = [];
  const walls: { render: number[]; plan: number[] } = { render: [], plan: [] };
  for (let i = 0; i < RUNS; i++) {
    renders.push(await cpuOf(render, walls.render));
    plans.push(await cpuOf(plan, walls.plan));
    reads.push(await cpuOf(readLive));
    summaries.push(await cpuOf(summarise));
  }
  const s = summariseFleet(last!.plans);
  const changed = s.changed;
  const summary = `${s.groups.length} group(s), largest ${s.groups[0]?.clusters.length ?? 0}`;
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const r = med(renders);
  const p = med(plans);
  ctx.report(
    `full vc render of ${CLUSTERS} clusters (${objects} objects), CPU`,
    r,
    "ms",
    `median of ${RUNS}; wall ${med(walls.render).toFixed(0)} ms`,
  );
  ctx.report(
    `plan of a fleet/values.yaml change (markdown, vs hydrated), CPU`,
    p,
    "ms",
    `median of ${RUNS}; wall ${med(walls.plan).toFixed(0)} ms; ${changed} clusters changed, ${summary}`,
  );
  ctx.report("plan / render (CPU)", p / r, "×", "target ≤ 2");
  ctx.report("  of which: reading the hydrated base (dir: target), CPU", med(reads), "ms", `median of ${RUNS}`);
  ctx.report("  of which: the fleet summary, CPU", med(summaries), "ms", `median of ${RUNS}`);
  await target.close();

  // The same plan against a live host (the API test server in a process of its own, holding the base branch's objects).
  writeFileSync(join(root, "fleet/values.yaml"), base("1.0.0"));
  const server = await startServerProcess();
  const kube = new KubeTarget(KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" }));
  try {
    await applyFleet(kube, await loadDesiredIndex(root, REVISION), {
      prune: true,
      allowMassPrune: true,
      force: false,
      dryRun: false,
      clusterConcurrency: 8,
    });
    writeFileSync(join(root, "fleet/values.yaml"), base("1.1.0"));
    const planLive = async (): Promise<void> => {
      const report = await planFleet(kube, await loadDesiredIndex(root, REVISION), {
        prune: true,
        allowMassPrune: false,
      });
      formatPlanReport(report, "markdown");
    };
    await planLive();
    const lives: number[] = [];
    const liveWalls: number[] = [];
    for (let i = 0; i < RUNS; i++) lives.push(await cpuOf(planLive, liveWalls));
    const l = med(lives);
    ctx.report(
      "plan of the same change against a live host (API test server), CPU of this process",
      l,
      "ms",
      `median of ${RUNS}; wall ${med(liveWalls).toFixed(0)} ms; the server's own CPU not counted`,
    );
    ctx.report("live plan / render (CPU)", l / r, "×", "target ≤ 2");
  } finally {
    await kube.close();
    await server.close();
  }
}

/** The CPU time (user + system, every thread of the process) `fn` takes, in ms; its wall time goes to `wall`. */
async function cpuOf(fn: () => unknown | Promise<unknown>, wall?: number[]): Promise<number> {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  wall?.push(Number(process.hrtime.bigint() - t0) / 1e6);
  return (c.user + c.system) / 1000;
}

/** The API test server in a child process (bench/apply-server.ts), as a real API server would run. */
async function startServerProcess(): Promise<{ kubeconfigPath: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "apply-server.ts")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error("the test server process ended");
  const hello = JSON.parse(first.value as string) as { kubeconfigPath: string };
  return {
    kubeconfigPath: hello.kubeconfigPath,
    close: async () => {
      child.stdin!.write(`${JSON.stringify({ op: "close" })}\n`);
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}
