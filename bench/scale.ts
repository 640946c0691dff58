// Benchmark: vc at fleet scale on the dir: target (issue #26's table). A generated fleet of N clusters (1,000; 10,000
// with `npm run bench -- scale --clusters=10000`), each command run as its own process (the bundled CLI, as an image
// runs it) reporting its own peak RSS and CPU: first `vc apply`, no-op `vc diff` (and a first diff into an empty
// folder, in text, JSON and YAML), the reconciler's start-up full pass over the up-to-date target, a one-cluster
// change applied while a full pass runs, and its steady RSS and heap with the Deployment's V8 flags; and, on the API
// test server, a no-op `vc diff --target kube`, `vc list` in the repository and `vc reconcile --once` (`host`).
// `--only=apply,diff,watch,startup,change,host` runs those parts (default: all; the fleet and one first apply are
// always made, since every other part needs the target); `--runs=N` runs apply and diff N times (3 at
// 1,000, 1 at 10,000 by default) and, given explicitly, the start-up passes too (a new reconciler each time, with a
// cache folder of its own: a restart over the target with its status files, and a first pass without them). VC_BENCH_SEMI_SPACE=2,4,8 runs the
// reconciler parts once per `--max-semi-space-size` given (default: the Deployment's), the rest of the flags unchanged.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { bundle } from "./reconcile.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const HOOK = join(ROOT, "bench/usage-hook.mjs");
/** As deploy/reconciler/deployment.yaml sets NODE_OPTIONS and MALLOC_ARENA_MAX. */
const DEPLOYMENT_FLAGS = ["--max-old-space-size=192", "--max-semi-space-size=2"];
/**
 * The reconciler's V8 flag sets to measure: VC_BENCH_V8_FLAGS lists whole sets (separated by `;`, each replacing the
 * Deployment's flags); VC_BENCH_SEMI_SPACE lists semi-space sizes (MiB, comma-separated), the rest of the Deployment's
 * flags unchanged; the Deployment's flags without either.
 */
function reconcilerFlagSets(): string[][] {
  const sets = process.env.VC_BENCH_V8_FLAGS;
  if (sets) {
    return sets.split(";").map((set) => {
      const flags = set.trim().split(/\s+/).filter(Boolean);
      if (flags.length === 0 || flags.some((f) => !f.startsWith("--")))
        throw new Error(`VC_BENCH_V8_FLAGS takes sets of V8 flags separated by ";"; got ${sets}`);
      return flags;
    });
  }
  const given = process.env.VC_BENCH_SEMI_SPACE;
  if (!given) return [DEPLOYMENT_FLAGS];
  return given.split(",").map((v) => {
    if (!/^[1-9]\d*$/.test(v.trim()))
      throw new Error(`VC_BENCH_SEMI_SPACE takes semi-space sizes in MiB, comma-separated; got ${given}`);
    return [
      ...DEPLOYMENT_FLAGS.filter((f) => !f.startsWith("--max-semi-space-size=")),
      `--max-semi-space-size=${v.trim()}`,
    ];
  });
}
const DEPLOYMENT_ENV = { MALLOC_ARENA_MAX: "2" };
const MESH = 5;
const CHANGES = 3;

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const v = Number(
    arg ? arg.slice(name.length + 3) : (process.env[`VC_BENCH_SCALE_${name.toUpperCase()}`] ?? fallback),
  );
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} needs a positive integer`);
  return v;
}

const PARTS = ["apply", "diff", "watch", "startup", "change", "host"] as const;
type Part = (typeof PARTS)[number];

/** The parts `--only=a,b` names (every part without it). */
function parts(): Set<Part> {
  const arg = process.argv.find((a) => a.startsWith("--only="));
  if (!arg) return new Set(PARTS);
  const named = arg.slice("--only=".length).split(",").filter(Boolean);
  const unknown = named.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0 || named.length === 0) throw new Error(`--only takes ${PARTS.join(", ")}; got ${arg}`);
  return new Set(named as Part[]);
}

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
/** Changes made so far: each one sets a CPU request no earlier change set, whichever reconciler run makes it. */
let changesMade = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

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

function procStat(pid: number): { rssMiB: number; cpuMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100 per second on Linux)
  return { rssMiB: Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024, cpuMs: ticks * 10 };
}

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 20,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

function statefulSetFile(out: string, cluster: string): string {
  const walk = (dir: string): string | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        const f = walk(p);
        if (f) return f;
      } else if (e.name.startsWith("statefulset.apps_")) return p;
    }
    return undefined;
  };
  const f = walk(join(out, cluster));
  if (!f) throw new Error(`no StatefulSet manifest for ${cluster} under ${out}`);
  return f;
}

export async function run(ctx: BenchContext): Promise<void> {
  const n = option("clusters", 1000);
  const runs = option("runs", n > 2000 ? 1 : 3);
  const only = parts();
  const base = join(ctx.workDir, `scale-${n}`);
  const repo = join(base, "repo");
  const out = join(base, "hydrated");
  rmSync(base, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  await generateFleet(repo, { clusters: n, meshPerCluster: MESH });
  const bundled = bundle();
  const cli = bundled ? [bundled] : ["--import", "tsx", join(ROOT, "src/cli/main.ts")];
  // The validation workers start from bin/validate-worker.js, which runs dist/app when it is fresh (as in the image),
  // else the sources through tsx (tens of MiB more per worker): build it.
  const built = buildDist();
  ctx.report(
    "fleet",
    `${n} clusters, ${MESH} mesh manifests each`,
    "",
    `${bundled ? "bundled CLI" : "tsx (esbuild not found)"}; workers from ${built ? "dist/app" : "tsx (npm run build failed)"}`,
  );

  // First apply onto an empty folder (each run starts from nothing).
  const applies: Usage[] = [];
  for (let i = 0; i < (only.has("apply") ? runs : 1); i++) {
    rmSync(out, { recursive: true, force: true });
    const u = await vc(cli, ["apply", repo, "--target", `dir:${out}`], base);
    if (u.code !== 0) throw new Error(`vc apply exited ${u.code}: ${u.stderr}`);
    applies.push(u);
  }
  const files = countFiles(out);
  if (only.has("apply"))
    ctx.report(
      "first vc apply --target dir: CPU",
      med(applies.map((u) => u.cpuMs)) / 1000,
      "s",
      `median of ${runs}; peak RSS ${(med(applies.map((u) => u.maxRssKiB)) / 1024) | 0} MiB; ${files} manifests written`,
    );

  if (only.has("diff")) {
    const diffs: Usage[] = [];
    for (let i = 0; i < runs; i++) {
      const u = await vc(cli, ["diff", repo, "--target", `dir:${out}`, "--exit-code"], base);
      if (u.code !== 0) throw new Error(`no-op vc diff exited ${u.code} (drift?): ${u.stderr}`);
      diffs.push(u);
    }
    ctx.report(
      "no-op vc diff --target dir: CPU",
      med(diffs.map((u) => u.cpuMs)) / 1000,
      "s",
      `median of ${runs}: ${diffs.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")}; wall ${(med(diffs.map((u) => u.wallMs)) / 1000).toFixed(1)} s`,
    );
    ctx.report(
      "no-op vc diff --target dir: peak RSS",
      med(diffs.map((u) => u.maxRssKiB)) / 1024,
      "MiB",
      `median of ${runs}`,
    );
    // With the start-up pass: the same diff under each of the reconciler's flag sets (and its environment), so that the
    // pass can be compared with a diff that ran under the same heap.
    if (only.has("startup")) {
      for (const flags of reconcilerFlagSets()) {
        const same: Usage[] = [];
        for (let i = 0; i < runs; i++) {
          const u = await vc(cli, ["diff", repo, "--target", `dir:${out}`, "--exit-code"], base, flags, DEPLOYMENT_ENV);
          if (u.code !== 0) throw new Error(`no-op vc diff with ${flags.join(" ")} exited ${u.code}: ${u.stderr}`);
          same.push(u);
        }
        ctx.report(
          `no-op vc diff --target dir: CPU with the reconciler's flags ${flags.join(" ")}`,
          med(same.map((u) => u.cpuMs)) / 1000,
          "s",
          `median of ${runs}: ${same.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")}; peak RSS ${(med(same.map((u) => u.maxRssKiB)) / 1024) | 0} MiB`,
        );
      }
    }
    // A first diff (into an empty folder): every object is a create, its whole YAML a diff the report prints, in
    // each output format (each streams the report a cluster at a time).
    for (const format of ["text", "json", "yaml"]) {
      const first = await vc(cli, ["diff", repo, "--target", `dir:${join(base, "empty")}`, "-o", format], base);
      if (first.code !== 0) throw new Error(`first vc diff -o ${format} exited ${first.code}: ${first.stderr}`);
      ctx.report(
        `first vc diff --target dir: (an empty folder) -o ${format} peak RSS`,
        first.maxRssKiB / 1024,
        "MiB",
        `one run; CPU ${(first.cpuMs / 1000).toFixed(1)} s; its output to /dev/null`,
      );
    }
  }

  if (only.has("host")) await onHost(ctx, cli, base, repo, n, runs);
  if (only.has("watch")) await watcherHeap(ctx, repo, n);
  // The start-up pass runs once unless --runs (or VC_BENCH_SCALE_RUNS) asks for more: each run is a whole reconciler.
  const startupRuns =
    only.has("startup") && (process.argv.some((a) => a.startsWith("--runs=")) || process.env.VC_BENCH_SCALE_RUNS)
      ? runs
      : 1;
  if (!only.has("startup") && !only.has("change")) return;
  // The status and cache folders of every reconciler run are deleted after the last one (see reconciler()).
  const aside: string[] = [];
  try {
    const sets = reconcilerFlagSets();
    for (const [k, flags] of sets.entries())
      await reconciler(
        ctx,
        cli,
        base,
        repo,
        out,
        n,
        startupRuns,
        only.has("startup"),
        only.has("change"),
        flags,
        sets.length > 1 ? `${k}-` : "",
        aside,
      );
  } finally {
    for (const dir of aside) rmSync(dir, { recursive: true, force: true });
  }
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
      // LISTs of live objects (the inventory kinds, selected by the inventory label): each LIST's first request, and every request.
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
        `median of ${runs}: ${usages.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")}; wall ${(med(usages.map((u) => u.wallMs)) / 1000).toFixed(1)} s; ${n} clusters; ${med(wholeRecordLists)} LISTs of every record`,
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

/**
 * The long-running reconciler over the folder, with the Deployment's flags, `runs` times each of two start-ups, every
 * run a new process with an empty cache folder (a new pod's `emptyDir`):
 * - a restart (the issue's start-up pass): the target as its last writer left it, its status files included (`vc
 *   apply`'s, or the previous reconciler's): a settled cluster's status is not written again;
 * - a target without status (statuses moved out before each run, e.g. a `.vc-status` deleted by hand): every
 *   cluster's status is written, a file each.
 * The second only with `startup`. Then, with `change`, a change during a full pass and the steady memory of the last
 * restart.
 */
async function reconciler(
  ctx: BenchContext,
  cli: string[],
  base: string,
  repo: string,
  out: string,
  n: number,
  runs: number,
  startup: boolean,
  change: boolean,
  flags: string[],
  tag: string,
  aside: string[],
): Promise<void> {
  const report = (what: string, startups: Startup[]) => {
    const note =
      runs > 1 ? `median of ${runs}: ${startups.map((u) => (u.cpuMs / 1000).toFixed(1)).join(", ")} s CPU; ` : "";
    ctx.report(
      what,
      med(startups.map((u) => u.wallMs)) / 1000,
      "s",
      `${note}CPU ${(med(startups.map((u) => u.cpuMs)) / 1000).toFixed(1)} s incl. start; peak RSS ${med(startups.map((u) => u.peakMiB)).toFixed(0)} MiB; flags ${flags.join(" ")}; load ${loadAverage()}`,
    );
  };
  const unwritten: Startup[] = [];
  for (let i = 0; i < (startup ? runs : 0); i++) {
    // The status files are moved out of the target (not deleted: files created right after ten thousand were deleted
    // cost ext4 about three times the system CPU of files in a fresh folder), and each run has a cache folder of its
    // own; both are deleted after the bench's last run.
    if (existsSync(join(out, ".vc-status"))) {
      aside.push(join(base, `statuses-of-run-${tag}${i}`));
      renameSync(join(out, ".vc-status"), aside.at(-1)!);
    }
    await reconcilerRun(
      ctx,
      cli,
      base,
      repo,
      out,
      n,
      cacheFolder(base, `${tag}unwritten-${i}`, aside),
      false,
      flags,
      (s) => unwritten.push(s),
    );
  }
  if (startup) report("reconciler first pass over a dir: target without status (every status written)", unwritten);
  const restarts: Startup[] = [];
  for (let i = 0; i < runs; i++) {
    // Reported once the last run's pass is over, before its change and steady memory are measured.
    await reconcilerRun(
      ctx,
      cli,
      base,
      repo,
      out,
      n,
      cacheFolder(base, `${tag}restart-${i}`, aside),
      change && i === runs - 1,
      flags,
      (s) => {
        restarts.push(s);
        if (i === runs - 1)
          report(
            "reconciler start-up full pass over the up-to-date dir: target (a restart: statuses present, cache empty)",
            restarts,
          );
      },
    );
  }
}

/** A cache folder of a run's own, deleted with the bench's other leftovers. */
function cacheFolder(base: string, name: string, aside: string[]): string {
  const dir = join(base, `reconciler-cache-${name}`);
  aside.push(dir);
  return dir;
}

interface Startup {
  wallMs: number;
  cpuMs: number;
  peakMiB: number;
}

async function reconcilerRun(
  ctx: BenchContext,
  cli: string[],
  base: string,
  repo: string,
  out: string,
  n: number,
  cacheDir: string,
  change: boolean,
  flags: string[],
  onStartup: (s: Startup) => void,
): Promise<void> {
  let child: ChildProcess | undefined;
  let log = "";
  let reconciled = 0;
  let peak = 0;
  const sampler = setInterval(() => {
    if (child?.pid && child.exitCode === null) peak = Math.max(peak, procStat(child.pid).rssMiB || 0);
  }, 100);
  try {
    const t0 = Date.now();
    // Its own empty cache folder, as a new pod starts: the default one is shared, and entries of an earlier run (or of
    // another checkout's run on the same generated fleet) would make the start-up pass look cheaper than it is.
    rmSync(cacheDir, { recursive: true, force: true });
    child = spawn(
      process.execPath,
      [
        ...flags,
        ...cli,
        "reconcile",
        "--repo",
        repo,
        "--target",
        `dir:${out}`,
        "--cache-dir",
        cacheDir,
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1h",
        "--resync",
        "1s",
      ],
      {
        cwd: base,
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, ...DEPLOYMENT_ENV },
      },
    );
    const exited = new Promise<number | null>((r) => child!.once("exit", r));
    child.stderr!.on("data", (d: Buffer) => {
      const text = d.toString();
      reconciled += text.split('"msg":"reconciled"').length - 1;
      log = (log + text).slice(-4000);
    });
    const dead = exited.then((code) => Promise.reject(new Error(`reconciler exited (${code}): ${log}`)));
    const url = await Promise.race([
      until("the reconciler to listen", () => /"msg":"listening","url":"([^"]+)"/.exec(log)?.[1], 120_000),
      dead,
    ]);
    await Promise.race([
      until(
        "the start-up pass",
        async () =>
          (await fetch(`${url}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          ))
            ? true
            : undefined,
        3_600_000,
        200,
      ),
      dead,
    ]);
    onStartup({ wallMs: Date.now() - t0, cpuMs: procStat(child.pid!).cpuMs, peakMiB: peak });
    if (!change) return;

    // A one-cluster change while a full pass runs (--resync 1s keeps full passes coming).
    const times: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const before = reconciled;
      await Promise.race([
        until(
          "a full pass under way",
          () => (reconciled >= before + Math.min(20, Math.ceil(n / 50)) ? true : undefined),
          600_000,
        ),
        dead,
      ]);
      const cluster = fleetClusterName((i * 97 + 13) % n);
      const values = join(repo, "clusters", cluster, "values.yaml");
      const cpu = `${301 + changesMade++}m`;
      writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, `cpu: ${cpu}`));
      const t1 = Date.now();
      const manifest = statefulSetFile(out, cluster);
      await Promise.race([
        until(
          `${cluster} applied`,
          () => (readFileSync(manifest, "utf8").includes(`cpu: ${cpu}`) ? true : undefined),
          1_800_000,
          10,
        ),
        dead,
      ]);
      times.push(Date.now() - t1);
    }
    ctx.report(
      "one-cluster change -> applied, while a full pass runs",
      med(times),
      "ms",
      `median of ${CHANGES}; min ${Math.min(...times)}, max ${Math.max(...times)}; folder watch`,
    );

    await sleep(3000);
    const steady: number[] = [];
    for (let i = 0; i < 5; i++) {
      steady.push(procStat(child.pid!).rssMiB);
      await sleep(1000);
    }
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const heap = Number(/^vc_reconciler_nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? NaN) / 1048576;
    ctx.report(
      "reconciler steady RSS (--resync 1s: full passes one after another)",
      med(steady),
      "MiB",
      `JS heap in use ${heap.toFixed(0)} MiB; peak RSS ${peak.toFixed(0)} MiB; flags ${flags.join(" ")}; load ${loadAverage()}`,
    );
  } finally {
    clearInterval(sampler);
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child!.once("exit", r));
    }
  }
}
