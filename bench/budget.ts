// Benchmark: the reconciler's peak resident memory (`vc reconcile --once`, deployed V8 flags) on folders at the folder
// budget, past it, and on a small fleet.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { DEFAULT_FOLDER_BUDGET } from "../src/repo/budget.js";
import { heapLimitMiB } from "../src/reconciler/memory.js";
import { writeBudgetFolder } from "../test/support/budget-folder.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const RUNS = Number(process.env.VC_BENCH_RUNS ?? 3);
/**
 * V8 flags of the measured process; the default is what deploy/reconciler/deployment.yaml had before it was sized
 * (192).
 */
const V8_FLAGS = (process.env.VC_BENCH_V8_FLAGS ?? "--max-old-space-size=192 --max-semi-space-size=2")
  .split(" ")
  .filter(Boolean);
/** Prints the process's own peak resident memory (getrusage, KiB) as it exits. */
const PEAK =
  `data:text/javascript,process.on("exit",()=>process.stderr.write("vc-bench-maxrss ` +
  `"+process.resourceUsage().maxRSS+"\\n"))`;

function commit(repo: string): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: repo,
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "fleet");
}

/** One `vc reconcile --once` into a fresh dir: target: its peak RSS (MiB) and how it ended. */
async function reconcileOnce(workDir: string, repo: string, i: number): Promise<{ mib: number; ended: string }> {
  const out = join(workDir, `budget-out-${i}`);
  const cache = join(workDir, `budget-cache-${i}`);
  rmSync(out, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
  const child = spawn(
    process.execPath,
    [
      ...V8_FLAGS,
      "--import",
      PEAK,
      join(ROOT, "bin/vc.js"),
      "reconcile",
      "--once",
      "--repo",
      repo,
      "--target",
      `dir:${out}`,
      "--cache-dir",
      cache,
    ],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, MALLOC_ARENA_MAX: "2" } },
  );
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
    child.once("exit", (c, s) => r([c, s])),
  );
  const kib = Number(/vc-bench-maxrss (\d+)/.exec(err)?.[1] ?? NaN);
  return {
    mib: kib / 1024,
    ended: signal ? `killed by ${signal}` : /heap out of memory/.test(err) ? "out of memory" : `exit ${code}`,
  };
}

export async function run(ctx: BenchContext): Promise<void> {
  const base = join(ctx.workDir, "budget");
  rmSync(base, { recursive: true, force: true });
  const repos: Array<{ name: string; repo: string }> = [];
  const make = (name: string, fill: (repo: string) => void) => {
    const repo = join(base, name);
    mkdirSync(join(repo, "clusters"), { recursive: true });
    fill(repo);
    commit(repo);
    repos.push({ name, repo });
  };
  make("one small cluster", (r) => {
    mkdirSync(join(r, "clusters", "small"));
    writeFileSync(join(r, "clusters", "small", "values.yaml"), "{}\n");
  });
  make("largest folder the default budget admits (200 files, 2 MiB, 2,000 VirtualServices)", (r) =>
    writeBudgetFolder(r, "full", DEFAULT_FOLDER_BUDGET),
  );
  make("one folder past the budget by one object", (r) =>
    writeBudgetFolder(r, "past", DEFAULT_FOLDER_BUDGET, "objects"),
  );
  make("the issue's folder: eight ~1 MiB files, ~71,000 small VirtualServices (refused by the budget)", (r) => {
    mkdirSync(join(r, "clusters", "issue", "mesh"), { recursive: true });
    writeFileSync(join(r, "clusters", "issue", "values.yaml"), "{}\n");
    for (let f = 0, n = 0; f < 8; f++) {
      let s = "";
      while (s.length < 1024 * 1024 - 200)
        s +=
          `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: v${n}}\nspec: ` +
          `{hosts: [h${n++}]}\n`;
      writeFileSync(join(r, "clusters", "issue", "mesh", `f${f}.yaml`), s);
    }
  });
  make("four full folders (--concurrency 4)", (r) => {
    for (let i = 0; i < 4; i++) writeBudgetFolder(r, `full-${i}`, DEFAULT_FOLDER_BUDGET);
  });
  ctx.report(
    "heap limit the formula gives for four full folders at --concurrency 4",
    heapLimitMiB({
      budget: DEFAULT_FOLDER_BUDGET,
      concurrency: 4,
      shardBytes: 4 * DEFAULT_FOLDER_BUDGET.bytes,
      clusters: 4,
    }),
    "MiB",
    "src/reconciler/memory.ts",
  );
  for (const { name, repo } of repos) {
    const runs: Array<{ mib: number; ended: string }> = [];
    for (let i = 0; i < RUNS; i++) runs.push(await reconcileOnce(ctx.workDir, repo, i));
    const sorted = runs.map((r) => r.mib).sort((a, b) => a - b);
    ctx.report(
      `peak RSS, ${name}`,
      sorted[Math.floor(sorted.length / 2)]!,
      "MiB",
      `median of ${RUNS}, ${V8_FLAGS.join(" ")}; ${[...new Set(runs.map((r) => r.ended))].join(", ")}`,
    );
  }
  rmSync(base, { recursive: true, force: true });
}
