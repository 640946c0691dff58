// Benchmark: validate + render of a 1,000-cluster fleet (20 mesh manifests each) against bare js-yaml parsing of the
// same files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { renderSpecs } from "../src/render/fleet.js";
import { toYamlStream } from "../src/render/output.js";
import { loadAndValidate, validSpecs } from "../src/validate/index.js";
import type { ClusterSpec } from "../src/model/cluster.js";
import type { BenchContext } from "./run.js";
import { fleetYamlFiles, generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const RUNS = 5;

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "render-fleet");
  await generateFleet(root, { clusters: CLUSTERS, meshPerCluster: MESH });
  const files = fleetYamlFiles(root);

  const bare = (): void => {
    for (const f of files) loadAll(readFileSync(f, "utf8"));
  };
  let specs: ClusterSpec[] = [];
  let objects = 0;
  let rendered = 0;
  let diagnostics = -1;
  const validateOnly = async (): Promise<void> => {
    specs = validSpecs(await loadAndValidate(root));
  };
  const renderOnly = (): void => {
    const fleet = renderSpecs(specs, "0123456789abcdef0123456789abcdef01234567");
    objects = fleet.clusters.reduce((n, c) => n + c.objects.length, 0);
    rendered = fleet.clusters.length;
    diagnostics = fleet.diagnostics.length;
  };
  const full = async (): Promise<void> => {
    await validateOnly();
    renderOnly();
  };
  // Warm every path (JIT, compiled schemas, page cache), then alternate so noise hits all alike. Each run is
  // timed by the wall clock and by this process's CPU time (user + system), which a busy machine disturbs less.
  bare();
  await full();
  const wall = { bare: [] as number[], full: [] as number[], render: [] as number[] };
  const cpu = { bare: [] as number[], full: [] as number[], render: [] as number[] };
  const time = async (key: keyof typeof wall, fn: () => unknown): Promise<void> => {
    const c0 = process.cpuUsage();
    wall[key].push(await ctx.median(1, fn));
    const c = process.cpuUsage(c0);
    cpu[key].push((c.user + c.system) / 1000);
  };
  for (let i = 0; i < RUNS; i++) {
    await time("bare", bare);
    await time("full", full);
    await time("render", renderOnly);
  }
  const bareMs = med(wall.bare);
  const fullMs = med(wall.full);
  const renderMs = med(wall.render);
  const streamMs = await ctx.median(3, () => {
    for (const s of specs) toYamlStream(renderSpecs([s], "r").clusters[0]?.objects ?? []);
  });
  ctx.report(
    "fleet",
    `${CLUSTERS} clusters x ${MESH} mesh manifests, ${files.length} files; ${rendered} rendered to ${objects} objects`,
  );
  ctx.report("render diagnostics on the generated fleet", diagnostics, "", "expected 0");
  ctx.report(
    "bare js-yaml parse (read + loadAll)",
    bareMs,
    "ms",
    `wall, median of ${RUNS}; cpu ${med(cpu.bare).toFixed(0)} ms`,
  );
  ctx.report(
    "render alone (renderSpecs)",
    renderMs,
    "ms",
    `wall, median of ${RUNS}; cpu ${med(cpu.render).toFixed(0)} ms`,
  );
  ctx.report("validate + render", fullMs, "ms", `wall, median of ${RUNS}; cpu ${med(cpu.full).toFixed(0)} ms`);
  ctx.report("validate + render / bare parse", fullMs / bareMs, "x", "wall clock; target <= 2");
  ctx.report("validate + render / bare parse (cpu time)", med(cpu.full) / med(cpu.bare), "x", "target <= 2");
  ctx.report("render + YAML stream output", streamMs, "ms", "median of 3; what vc render prints");
}
