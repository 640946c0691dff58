// Benchmark: `vc validate` over a 1,000-cluster fleet (20 mesh manifests each) against bare js-yaml parsing of the same files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { loadAndValidate } from "../src/validate/index.js";
import { parseYaml } from "../src/repo/yaml.js";
import type { BenchContext } from "./run.js";
import { fleetYamlFiles, generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const RUNS = 5;

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "validate-fleet");
  await generateFleet(root, { clusters: CLUSTERS, meshPerCluster: MESH });
  const files = fleetYamlFiles(root);

  let documents = 0;
  const bare = (): void => {
    documents = 0;
    for (const f of files) documents += loadAll(readFileSync(f, "utf8")).length;
  };
  const ownParse = (): void => {
    for (const f of files) if (!parseYaml(readFileSync(f, "utf8")).ok) throw new Error(`${f} did not parse`);
  };
  let errors = -1;
  const full = async (): Promise<void> => {
    const r = await loadAndValidate(root);
    errors = r.diagnostics.length;
  };
  // Warm both paths (JIT, compiled schemas, page cache), then alternate so noise hits both alike.
  bare();
  await full();
  const bareTimes: number[] = [];
  const fullTimes: number[] = [];
  const bareCpu: number[] = [];
  const fullCpu: number[] = [];
  const cpuMs = async (fn: () => unknown): Promise<number> => {
    const before = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  };
  for (let i = 0; i < RUNS; i++) {
    let c = 0;
    bareTimes.push(await ctx.median(1, async () => void (c = await cpuMs(bare))));
    bareCpu.push(c);
    fullTimes.push(await ctx.median(1, async () => void (c = await cpuMs(full))));
    fullCpu.push(c);
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const bareMs = med(bareTimes);
  const fullMs = med(fullTimes);
  const fullCpuMs = med(fullCpu);
  const ownCpu: number[] = [];
  const ownMs = await ctx.median(RUNS, async () => void ownCpu.push(await cpuMs(ownParse)));
  ctx.report("fleet", `${CLUSTERS} clusters, ${files.length} files, ${documents} documents`);
  ctx.report("diagnostics on the generated fleet", errors, "", "expected 0");
  ctx.report("bare js-yaml parse (read + loadAll)", bareMs, "ms", `median of ${RUNS}`);
  ctx.report("vc validate (loadAndValidate)", fullMs, "ms", `median of ${RUNS}`);
  ctx.report("validate / bare parse", fullMs / bareMs, "x", "target <= 1.5");
  ctx.report("vc's own parse (read + parseYaml: fast loader, js-yaml fallback)", ownMs, "ms", `CPU ${med(ownCpu).toFixed(1)} ms; validate / own parse: ${(fullMs / ownMs).toFixed(2)}x wall, ${(fullCpuMs / med(ownCpu)).toFixed(2)}x CPU`);
  ctx.report("validate throughput", Math.round(documents / (fullMs / 1000)), "documents/s", "wall clock, one thread; target >= 20000");
  ctx.report("validate CPU time", fullCpuMs, "ms", `bare parse ${med(bareCpu).toFixed(1)} ms; ratio ${(fullCpuMs / med(bareCpu)).toFixed(3)}`);
  ctx.report("validate throughput per CPU second", Math.round(documents / (fullCpuMs / 1000)), "documents/s", "excludes time the shared machine gave to others");

  // An alias bomb of a few hundred bytes: refused, in milliseconds.
  const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(", ")}]`);
  const bomb = levels.join("\n");
  const bombMs = await ctx.median(RUNS, () => {
    if (parseYaml(bomb).ok) throw new Error("alias bomb accepted");
  });
  ctx.report("alias bomb (9^9 nodes, " + bomb.length + " bytes) refused in", bombMs, "ms");
}
