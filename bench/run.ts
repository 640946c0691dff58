// `npm run bench`: runs every benchmark suite (or those named: `npm run bench -- validate proxy`) and prints their
// figures. Each suite is a module exporting `run(ctx)`; figures are medians of several runs, ratios against a baseline
// measured in the same run where one exists, and exact API request counts.

export interface BenchContext {
  /** Scratch folder for generated fleets and repositories; reused across suites within one run. */
  workDir: string;
  /** Prints one figure line: `name: value unit  (note)`. */
  report(name: string, value: number | string, unit?: string, note?: string): void;
  /** Runs fn `runs` times and returns the median duration in milliseconds. */
  median(runs: number, fn: () => unknown | Promise<unknown>): Promise<number>;
}

type Suite = { name: string; load: () => Promise<{ run(ctx: BenchContext): Promise<void> }> };

// Suites register here, one line each.
const SUITES: Suite[] = [
  { name: "validate", load: () => import("./validate.js") },
  { name: "render", load: () => import("./render.js") },
  { name: "kube-server", load: () => import("./kube-server.js") },
  { name: "metrics-proxy", load: () => import("./metrics-proxy.js") },
  { name: "reconcile", load: () => import("./reconcile.js") },
  { name: "apply", load: () => import("./apply.js") },
  { name: "webhook", load: () => import("./webhook.js") },
  { name: "budget", load: () => import("./budget.js") },
  { name: "scale", load: () => import("./scale.js") },
  { name: "fleet-base", load: () => import("./fleet-base.js") },
  { name: "shards", load: () => import("./shards.js") },
  { name: "ssa", load: () => import("./ssa.js") },
  { name: "rollout", load: () => import("./rollout.js") },
  { name: "ui", load: () => import("./ui.js") },
];

async function median(runs: number, fn: () => unknown | Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function main(): Promise<void> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  // Words name suites; `--name=value` flags are the suites' own (e.g. `scale --clusters=10000`).
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const workDir = process.env.VC_BENCH_DIR ?? (await mkdtemp(join(tmpdir(), "vc-bench-")));
  const ctx: BenchContext = {
    workDir,
    median,
    report(name, value, unit = "", note = "") {
      const v =
        typeof value === "number"
          ? Number.isInteger(value)
            ? String(value)
            : value.toFixed(value < 10 ? 3 : 1)
          : value;
      process.stdout.write(`  ${name}: ${v}${unit ? ` ${unit}` : ""}${note ? `  (${note})` : ""}\n`);
    },
  };
  try {
    for (const suite of SUITES) {
      if (wanted.length > 0 && !wanted.includes(suite.name)) continue;
      process.stdout.write(`\n== ${suite.name}\n`);
      const mod = await suite.load();
      await mod.run(ctx);
    }
  } finally {
    // A scratch folder of its own is deleted (a 10,000-cluster fleet and its target are over a GB); VC_BENCH_DIR is
    // kept.
    if (!process.env.VC_BENCH_DIR) await rm(workDir, { recursive: true, force: true });
  }
}

await main();
