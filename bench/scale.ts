// Benchmark: vc at fleet scale on the dir: target (issues #26 and #35). A generated fleet of N clusters (1,000; 10,000
// with `npm run bench -- scale --clusters=10000`) of each shape asked for (`--shape=bench,wide`: bench/fleet.ts
// FLEET_SHAPES), each command run as its own process (the bundled CLI, as an image runs it; VC_BENCH_CLI=PATH runs
// another bundle, e.g. of older code) reporting its own peak RSS and CPU: first `vc apply`, no-op `vc diff` (and a
// first diff into an empty folder, in text, JSON and YAML), then in each watch mode of a local fleet (`--modes=`:
// `folder`, a plain folder, and `git`, the same fleet committed in a git checkout) the first apply and no-op diff
// again, the no-op diff under the reconciler's node flags, the reconciler's start-up pass over the up-to-date target
// and its steady memory, and the latency a user sees for a change made during that pass (`latency`: a commit or a
// file write for a cluster near the end of the pass's order, until its StatefulSet manifest changed), the reconciler
// launched as deploy/reconciler/deployment.yaml runs it (bench/scale-reconciler.ts); and, on the API test server, a
// no-op `vc diff --target kube`, `vc list` in the repository and `vc reconcile --once` (`host`).
// `--only=apply,diff,firstdiff,watch,startup,latency,host` runs those parts (default: all; the fleet and one first
// apply are always made, since every other part needs the target); `--runs=N` runs each measure N times (3 at 1,000, 1
// at 10,000 by default). VC_BENCH_SEMI_SPACE=2,4,8 or VC_BENCH_V8_FLAGS="set;set" runs the start-up pass once per flag
// set instead of the Deployment's node flags.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { clusterNameOf, FLEET_SHAPES, generateFleet, type FleetOptions, type FleetShape } from "./fleet.js";
import { bundle } from "./reconcile.js";
import {
  deploymentLaunch,
  latencyRun,
  loadAverage,
  med,
  reconcilerFlagSets,
  startupRun,
  type Latency,
  type RunFolders,
  type Startup,
} from "./scale-reconciler.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const HOOK = join(ROOT, "bench/usage-hook.mjs");

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const v = Number(
    arg ? arg.slice(name.length + 3) : (process.env[`VC_BENCH_SCALE_${name.toUpperCase()}`] ?? fallback),
  );
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} needs a positive integer`);
  return v;
}

/** The values of `--name=a,b` among `allowed` (`fallback` without it). */
function listOption<T extends string>(name: string, allowed: readonly T[], fallback: readonly T[]): T[] {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return [...fallback];
  const named = arg
    .slice(name.length + 3)
    .split(",")
    .filter(Boolean);
  const unknown = named.filter((p) => !(allowed as readonly string[]).includes(p));
  if (unknown.length > 0 || named.length === 0) throw new Error(`--${name} takes ${allowed.join(", ")}; got ${arg}`);
  return named as T[];
}

const PARTS = ["apply", "diff", "firstdiff", "watch", "startup", "latency", "host"] as const;
type Part = (typeof PARTS)[number];
const MODES = ["folder", "git"] as const;
type Mode = (typeof MODES)[number];

interface Usage {
  maxRssKiB: number;
  cpuMs: number;
  wallMs: number;
  code: number | null;
  stderr: string;
}

/** Runs `vc ARGS` to its end as a child process; its peak RSS and CPU come from the child itself (usage-hook.mjs). */
async function vc(
  cli: string[],
  args: string[],
  workDir: string,
  extraFlags: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Usage> {
  const usageFile = join(workDir, `usage-${process.pid}.json`);
  rmSync(usageFile, { force: true });
  const t0 = Date.now();
  const child = spawn(process.execPath, [...extraFlags, "--import", HOOK, ...cli, ...args], {
    cwd: workDir,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...extraEnv, VC_BENCH_USAGE_FILE: usageFile, NO_COLOR: "1" },
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  const u = JSON.parse(readFileSync(usageFile, "utf8")) as { maxRssKiB: number; cpuMs: number };
  return { ...u, wallMs: Date.now() - t0, code, stderr };
}

const mib = (kib: number): string => (kib / 1024).toFixed(0);

/** `what` run `runs` times (each must exit 0), reported as its median CPU and peak RSS. */
async function measured(
  ctx: BenchContext,
  what: string,
  runs: number,
  once: () => Promise<Usage>,
  note = "",
): Promise<Usage[]> {
  const usages: Usage[] = [];
  for (let i = 0; i < runs; i++) {
    const u = await once();
    if (u.code !== 0) throw new Error(`${what} exited ${u.code}: ${u.stderr}`);
    usages.push(u);
  }
  ctx.report(
    `${what} CPU`,
    med(usages.map((u) => u.cpuMs)) / 1000,
    "s",
    [
      `median of ${runs}: ${usages.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")}`,
      `peak RSS ${mib(med(usages.map((u) => u.maxRssKiB)))} MiB (${usages.map((u) => mib(u.maxRssKiB)).join(", ")})`,
      `wall ${(med(usages.map((u) => u.wallMs)) / 1000).toFixed(1)} s`,
      `load ${loadAverage()}`,
      ...(note ? [note] : []),
    ].join("; "),
  );
  return usages;
}

export async function run(ctx: BenchContext): Promise<void> {
  const n = option("clusters", 1000);
  const runs = option("runs", n > 2000 ? 1 : 3);
  const only = new Set(listOption("only", PARTS, PARTS));
  const shapes = listOption("shape", Object.keys(FLEET_SHAPES) as FleetShape[], ["bench"]);
  const modes = listOption("modes", MODES, MODES);
  const given = process.env.VC_BENCH_CLI;
  const bundled = given ? resolve(given) : bundle();
  const cli = bundled ? [bundled] : ["--import", "tsx", join(ROOT, "src/cli/main.ts")];
  // The validation workers start from bin/validate-worker.js, which runs dist/app when it is fresh (as in the image),
  // else the sources through tsx (tens of MiB more per worker): build it.
  const built = given ? true : buildDist();
  const launch = deploymentLaunch({ repo: "REPO", out: "OUT", cacheDir: "CACHE", secrets: join(ctx.workDir, "s") });
  ctx.report(
    "reconciler as deploy/reconciler/deployment.yaml runs it",
    `node ${launch.nodeFlags.join(" ")} vc ${launch.args.join(" ")}`,
    "",
    `env ${Object.entries(launch.env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}; replaced: ${launch.replaced.join("; ")}`,
  );
  ctx.report(
    "CLI",
    given ? `VC_BENCH_CLI ${bundled}` : bundled ? "bundled CLI" : "tsx (esbuild not found)",
    "",
    `workers from ${built ? "dist/app" : "tsx (npm run build failed)"}`,
  );
  for (const shape of shapes) await runShape(ctx, { cli, n, runs, only, shape, modes, nodeFlags: launch.nodeFlags });
}

interface ShapeRun {
  cli: string[];
  n: number;
  runs: number;
  only: Set<Part>;
  shape: FleetShape;
  modes: Mode[];
  /** The Deployment's node flags. */
  nodeFlags: string[];
}

/** Every part on one generated fleet of `shape`; its folders are deleted at its end. */
async function runShape(ctx: BenchContext, r: ShapeRun): Promise<void> {
  const { cli, n, runs, only } = r;
  const base = join(ctx.workDir, `scale-${n}-${r.shape}`);
  const repo = join(base, "repo");
  const out = join(base, "hydrated");
  rmSync(base, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  const shape: Omit<FleetOptions, "clusters"> = FLEET_SHAPES[r.shape];
  await generateFleet(repo, { clusters: n, ...shape });
  const names = Array.from({ length: n }, (_, i) => clusterNameOf(i, shape)).sort();
  const bytes = yamlBytes(join(repo, "clusters"));
  ctx.report(
    `fleet "${r.shape}"`,
    `${n} clusters`,
    "",
    `${JSON.stringify(shape)}; ${(bytes / n / 1024).toFixed(1)} KiB of YAML a cluster, ${mib(bytes / 1024)} MiB`,
  );
  const tag = (mode?: Mode) => `[${r.shape}${mode ? `, ${mode === "git" ? "git checkout" : "plain folder"}` : ""}]`;
  const f: RunFolders = { base, repo, out, aside: [] };
  try {
    // First apply onto an empty folder (each run starts from nothing), in the plain folder.
    await measured(ctx, `${tag("folder")} first vc apply --target dir:`, only.has("apply") ? runs : 1, async () => {
      rmSync(out, { recursive: true, force: true });
      return vc(cli, ["apply", repo, "--target", `dir:${out}`], base);
    });
    ctx.report(`${tag()} manifests written`, countFiles(out), "files");
    if (only.has("firstdiff")) await firstDiffs(ctx, r, base, repo, tag());
    if (only.has("host")) await onHost(ctx, cli, base, repo, n, runs);
    if (only.has("watch")) await watcherHeap(ctx, repo, n);
    for (const mode of r.modes) {
      if (mode === "git") commitFleet(repo);
      else rmSync(join(repo, ".git"), { recursive: true, force: true });
      if (mode === "git" && only.has("apply")) {
        const other = join(base, "hydrated-git");
        f.aside.push(other);
        await measured(ctx, `${tag(mode)} first vc apply --target dir:`, runs, async () => {
          rmSync(other, { recursive: true, force: true });
          return vc(cli, ["apply", repo, "--target", `dir:${other}`], base);
        });
        rmSync(other, { recursive: true, force: true });
      }
      if (only.has("diff"))
        await measured(ctx, `${tag(mode)} no-op vc diff --target dir:`, runs, () =>
          vc(cli, ["diff", repo, "--target", `dir:${out}`, "--exit-code"], base),
        );
      if (only.has("startup")) await startups(ctx, r, f, mode, tag(mode));
      if (only.has("latency")) await latencies(ctx, r, f, mode, names, tag(mode));
    }
  } finally {
    for (const dir of f.aside) rmSync(dir, { recursive: true, force: true });
    rmSync(base, { recursive: true, force: true });
  }
}

/** A first diff (into an empty folder): every object a create, its whole YAML a diff, in each output format. */
async function firstDiffs(ctx: BenchContext, r: ShapeRun, base: string, repo: string, tag: string): Promise<void> {
  for (const format of ["text", "json", "yaml"]) {
    const first = await vc(r.cli, ["diff", repo, "--target", `dir:${join(base, "empty")}`, "-o", format], base);
    if (first.code !== 0) throw new Error(`first vc diff -o ${format} exited ${first.code}: ${first.stderr}`);
    ctx.report(
      `${tag} first vc diff --target dir: (an empty folder) -o ${format} peak RSS`,
      first.maxRssKiB / 1024,
      "MiB",
      `one run; CPU ${(first.cpuMs / 1000).toFixed(1)} s; its output to /dev/null`,
    );
  }
}

/**
 * The no-op diff under each of the reconciler's flag sets (and its environment), then the start-up pass with each, a
 * new reconciler every run (a restart: the target with the records a reconciler left, an empty cache folder; one pass
 * runs first, not measured, to leave them), the last one's steady memory, and the pass's CPU against the diff's.
 */
async function startups(ctx: BenchContext, r: ShapeRun, f: RunFolders, mode: Mode, tag: string): Promise<void> {
  for (const [k, flags] of reconcilerFlagSets(r.nodeFlags).entries()) {
    const env = { MALLOC_ARENA_MAX: "2" };
    const diffs = await measured(
      ctx,
      `${tag} no-op vc diff --target dir: with the reconciler's flags ${flags.join(" ")}`,
      r.runs,
      () => vc(r.cli, ["diff", f.repo, "--target", `dir:${f.out}`, "--exit-code"], f.base, flags, env),
    );
    // One pass first, not measured: a restart follows a pod that ran, and left its records as a reconciler leaves them.
    await startupRun(r.cli, f, `${mode}-${k}-first`, flags, false);
    const passes: Startup[] = [];
    for (let i = 0; i < r.runs; i++)
      passes.push(await startupRun(r.cli, f, `${mode}-${k}-${i}`, flags, i === r.runs - 1));
    const cpu = med(passes.map((p) => p.cpuMs));
    ctx.report(
      `${tag} reconciler start-up pass over the up-to-date dir: target (a restart) CPU`,
      cpu / 1000,
      "s",
      [
        `median of ${r.runs}: ${passes.map((p) => (p.cpuMs / 1000).toFixed(1)).join(", ")}`,
        `${(cpu / med(diffs.map((d) => d.cpuMs))).toFixed(2)} times the diff under the same flags`,
        `wall ${(med(passes.map((p) => p.wallMs)) / 1000).toFixed(1)} s`,
        `peak RSS ${med(passes.map((p) => p.peakMiB)).toFixed(0)} MiB`,
        `watch ${passes[0]!.watch}`,
        `flags ${flags.join(" ")}`,
        `load ${loadAverage()}`,
      ].join("; "),
    );
    const steady = passes.at(-1)!.steady!;
    ctx.report(
      `${tag} reconciler steady RSS after the start-up pass`,
      steady.rssMiB,
      "MiB",
      `JS heap in use ${steady.heapMiB.toFixed(0)} MiB; flags ${flags.join(" ")}`,
    );
  }
}

/**
 * The user's latency: in each run a new reconciler (the Deployment's flags and args), and once 3 % of the fleet (at
 * least one cluster) is reconciled by its start-up pass, a change to the values of the cluster at 95 % of the pass's
 * order (a commit in the git checkout, a file write in the plain folder), until its StatefulSet manifest holds it.
 */
async function latencies(
  ctx: BenchContext,
  r: ShapeRun,
  f: RunFolders,
  mode: Mode,
  names: readonly string[],
  tag: string,
): Promise<void> {
  const cluster = names[Math.floor((names.length - 1) * 0.95)]!;
  const into = Math.max(1, Math.round(names.length * 0.03));
  const runs: Latency[] = [];
  for (let i = 0; i < r.runs; i++)
    runs.push(await latencyRun(r.cli, f, `latency-${mode}-${i}`, mode, cluster, names, into));
  const l = runs[0]!;
  ctx.report(
    `${tag} ${mode === "git" ? "a commit" : "a file write"} -> the host object changed, during the start-up pass`,
    med(runs.map((x) => x.ms)),
    "ms",
    [
      `median of ${r.runs}: ${runs.map((x) => x.ms).join(", ")}`,
      `${l.cluster}, ${l.position + 1} of ${l.of} in the pass's order`,
      `made after ${runs.map((x) => x.reconciledBefore).join(", ")} clusters were reconciled`,
      `applied after ${runs.map((x) => x.reconciledAt).join(", ")}`,
      runs.every((x) => x.duringPass) ? "every change applied while the pass ran" : "some applied after the pass ended",
      `watch ${l.watch}`,
      `load ${loadAverage()}`,
    ].join("; "),
  );
}

/** The fleet folder made a git checkout with the fleet committed (kept when it is one already). */
function commitFleet(repo: string): void {
  if (existsSync(join(repo, ".git"))) return;
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: repo,
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "fleet");
}

/** Bytes of the YAML files under `dir`. */
function yamlBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += readFileSync(join(e.parentPath, e.name)).length;
  return n;
}

/**
 * The whole-fleet commands against a host: the fleet applied to the API test server (in this process, so wall times
 * include its answers; CPU and peak RSS are the vc process's own), then a no-op `vc diff --target kube` and `vc list`
 * inside the repository, `runs` times each.
 */
async function onHost(
  ctx: BenchContext,
  cli: string[],
  base: string,
  repo: string,
  n: number,
  runs: number,
): Promise<void> {
  const { startKubeServer } = await import("../test/support/kube-server/index.js");
  const { INVENTORY_TYPES } = await import("../src/sinks/kube/target.js");
  const inventoryPlurals = new Set(INVENTORY_TYPES.map((t) => t.plural));
  const server = await startKubeServer();
  try {
    const kube = ["--kubeconfig", server.kubeconfigPath];
    const applied = await vc(cli, ["apply", repo, "--target", "kube", ...kube], base);
    if (applied.code !== 0) throw new Error(`vc apply --target kube exited ${applied.code}: ${applied.stderr}`);
    ctx.report(
      "first vc apply --target kube (API test server) CPU",
      applied.cpuMs / 1000,
      "s",
      `one run; peak RSS ${(applied.maxRssKiB / 1024) | 0} MiB; wall ${(applied.wallMs / 1000).toFixed(1)} s`,
    );
    for (const [what, args, cwd] of [
      ["no-op vc diff --target kube", ["diff", repo, "--target", "kube", ...kube, "--exit-code"], base],
      ["vc list in the repository", ["list", "-o", "json", ...kube], repo],
      [
        "vc reconcile --once --target kube (a full pass changing nothing)",
        ["reconcile", "--once", "--repo", repo, "--target", "kube", ...kube],
        base,
      ],
    ] as const) {
      const usages: Usage[] = [];
      // LISTs of every record of the host (no selector beyond the records' own label) each run makes.
      const wholeRecordLists: number[] = [];
      // LISTs of live objects (the inventory kinds, selected by the inventory label): each LIST's first request, and
      // every request.
      const liveLists: number[] = [];
      const liveRequests: number[] = [];
      for (let i = 0; i < runs; i++) {
        server.resetRequests();
        const u = await vc(cli, [...args], cwd);
        if (u.code !== 0) throw new Error(`${what} exited ${u.code}: ${u.stderr}`);
        usages.push(u);
        wholeRecordLists.push(
          server.requests.filter(
            (r) =>
              r.method === "GET" &&
              r.path.endsWith("/configmaps") &&
              decodeURIComponent(r.query).replace(/&limit=\d+$/, "") === "labelSelector=vc.orch.io/record=record",
          ).length,
        );
        const live = server.requests.filter(
          (r) =>
            r.method === "GET" &&
            !r.name &&
            inventoryPlurals.has(r.resource ?? "") &&
            decodeURIComponent(r.query).includes("vc.orch.io/inventory"),
        );
        liveLists.push(live.filter((r) => !r.query.includes("continue=")).length);
        liveRequests.push(live.length);
      }
      ctx.report(
        `${what} CPU`,
        med(usages.map((u) => u.cpuMs)) / 1000,
        "s",
        `median of ${runs}: ${usages.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")}; wall ` +
          `${(med(usages.map((u) => u.wallMs)) / 1000).toFixed(1)} s; ${n} clusters; ${med(wholeRecordLists)} ` +
          `LISTs of every record`,
      );
      ctx.report(
        `${what} LISTs of live objects`,
        med(liveLists),
        "LISTs",
        `median of ${runs}; ${med(liveRequests)} requests with their continue pages`,
      );
      ctx.report(`${what} peak RSS`, med(usages.map((u) => u.maxRssKiB)) / 1024, "MiB", `median of ${runs}`);
    }
  } finally {
    await server.close();
  }
}

/** `npm run build` (dist/app, what bin/validate-worker.js runs when fresh); false when it fails. */
export function buildDist(): boolean {
  try {
    execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** The folder watcher's heap in each mode (src/reconciler/source.ts WatchMode), each in its own process. */
async function watcherHeap(ctx: BenchContext, repo: string, n: number): Promise<void> {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: repo,
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-qm", "fleet");
  try {
    for (const mode of ["files", "top", "git"]) {
      const res = execFileSync(
        process.execPath,
        ["--expose-gc", "--import", "tsx", join(ROOT, "bench/watch-heap.ts"), repo, mode],
        { cwd: ROOT, encoding: "utf8" },
      );
      const m = JSON.parse(res.trim().split("\n").pop()!) as { heapMiB: number; rssMiB: number };
      ctx.report(
        `folder watcher heap, ${mode} mode`,
        m.heapMiB,
        "MiB",
        `RSS +${m.rssMiB.toFixed(0)} MiB; ${n} clusters`,
      );
    }
  } finally {
    rmSync(join(repo, ".git"), { recursive: true, force: true });
  }
}

function countFiles(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n++;
  return n;
}
