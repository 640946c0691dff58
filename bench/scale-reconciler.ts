// Part of bench/scale.ts: the reconciler launched as deploy/reconciler/deployment.yaml runs it (its args, its env, the
// node flags of its NODE_OPTIONS), over a dir: target and a local fleet folder: its start-up pass (CPU, as a restart
// over the target its predecessor left), the latency a user sees for a change made while that pass runs (a commit in
// a git checkout, or a file written in a plain folder, until the host object changed), and its steady memory.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { load } from "js-yaml";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const DEPLOYMENT = join(ROOT, "deploy/reconciler/deployment.yaml");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

/** How the Deployment starts the reconciler: node's flags, the environment, vc's arguments. */
export interface Launch {
  nodeFlags: string[];
  env: Record<string, string>;
  args: string[];
  /** The Deployment's arguments the bench had to replace (a host, a port, files of the pod), and why. */
  replaced: string[];
}

interface Container {
  args: string[];
  env?: Array<{ name: string; value?: string }>;
}

/**
 * The Deployment's container as a local process over `repo` and `dir:out`: the same arguments but `--repo` (the fleet
 * folder), `--target` (the dir: folder), `--listen` (a free loopback port), `--cache-dir` (a new folder, as a new pod's
 * emptyDir), the secret files (files of the bench's), and `--leader-elect` left out (a Lease needs a host; a dir:
 * target has none). NODE_OPTIONS become node's flags; the other variables with a value are kept.
 */
export function deploymentLaunch(opts: { repo: string; out: string; cacheDir: string; secrets: string }): Launch {
  const docs = [] as unknown[];
  for (const doc of readFileSync(DEPLOYMENT, "utf8").split(/^---$/m)) if (doc.trim()) docs.push(load(doc));
  const deployment = docs.find((d) => (d as { kind?: string }).kind === "Deployment") as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  const container = deployment.spec.template.spec.containers[0]!;
  mkdirSync(opts.secrets, { recursive: true });
  const webhook = join(opts.secrets, "webhook-secret");
  const token = join(opts.secrets, "git-token");
  writeFileSync(webhook, randomBytes(32).toString("hex"), { mode: 0o600 });
  writeFileSync(token, "unused-by-a-local-folder", { mode: 0o600 });
  const replacing: Record<string, [string, string]> = {
    "--repo": [opts.repo, "the fleet folder"],
    "--target": [`dir:${opts.out}`, "a dir: folder"],
    "--listen": ["127.0.0.1:0", "a free loopback port"],
    "--cache-dir": [opts.cacheDir, "a new folder, as a new pod's emptyDir"],
    "--webhook-secret-file": [webhook, "a file of the bench's"],
    "--git-credentials": [token, "a file of the bench's"],
  };
  const args: string[] = [];
  const replaced: string[] = [];
  for (let i = 0; i < container.args.length; i++) {
    const a = container.args[i]!;
    if (a === "--leader-elect") {
      replaced.push("--leader-elect left out (a Lease needs a host)");
      continue;
    }
    const r = replacing[a];
    args.push(a);
    if (r && i + 1 < container.args.length) {
      args.push(r[0]);
      replaced.push(`${a} ${container.args[i + 1]} -> ${r[1]}`);
      i++;
    }
  }
  const env: Record<string, string> = { POD_NAME: "bench-reconciler", POD_NAMESPACE: "vc-system" };
  let nodeFlags: string[] = [];
  for (const e of container.env ?? []) {
    if (e.value === undefined) continue;
    if (e.name === "NODE_OPTIONS") nodeFlags = e.value.split(/\s+/).filter(Boolean);
    else env[e.name] = e.value;
  }
  return { nodeFlags, env, args, replaced };
}

/**
 * The reconciler's V8 flag sets to measure: VC_BENCH_V8_FLAGS lists whole sets (separated by `;`, each replacing the
 * Deployment's flags); VC_BENCH_SEMI_SPACE lists semi-space sizes (MiB, comma-separated), the rest of the Deployment's
 * flags unchanged; the Deployment's own NODE_OPTIONS without either.
 */
export function reconcilerFlagSets(deployment: string[]): string[][] {
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
  if (!given) return [deployment];
  return given.split(",").map((v) => {
    if (!/^[1-9]\d*$/.test(v.trim()))
      throw new Error(`VC_BENCH_SEMI_SPACE takes semi-space sizes in MiB, comma-separated; got ${given}`);
    return [...deployment.filter((f) => !f.startsWith("--max-semi-space-size=")), `--max-semi-space-size=${v.trim()}`];
  });
}

/** A reconciler process of the bench. */
interface Running {
  child: ChildProcess;
  url: string;
  /** `reconciled` log lines so far. */
  reconciled(): number;
  /** The watch mode its `reconciler started` line names. */
  watch(): string | undefined;
  /** Whether /readyz answers 200 (the start-up pass is over). */
  ready(): Promise<boolean>;
  /** User + system CPU so far, from /proc. */
  cpuMs(): number;
  /** Resident memory now and at its peak (VmRSS, VmHWM), MiB. */
  rss(): { now: number; peak: number };
  stop(): Promise<void>;
}

function procStat(pid: number): { rssMiB: number; hwmMiB: number; cpuMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100 per second on Linux)
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rssMiB: kib("VmRSS") / 1024, hwmMiB: kib("VmHWM") / 1024, cpuMs: ticks * 10 };
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

/** Starts `vc reconcile` as `launch` says (with `flags` instead of the Deployment's node flags when given). */
async function start(cli: string[], launch: Launch, cwd: string, flags: string[]): Promise<Running> {
  const child = spawn(process.execPath, [...flags, ...cli, ...launch.args], {
    cwd,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...launch.env, NO_COLOR: "1" },
  });
  let log = "";
  let reconciled = 0;
  let watch: string | undefined;
  child.stderr!.on("data", (d: Buffer) => {
    const text = d.toString();
    reconciled += text.split('"msg":"reconciled"').length - 1;
    watch ??= /"msg":"reconciler started".*?"watch":"(\w+)"/.exec(text)?.[1];
    log = (log + text).slice(-8000);
  });
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  const dead = exited.then((code) => Promise.reject(new Error(`reconciler exited (${code}): ${log}`)));
  dead.catch(() => undefined);
  const url = await Promise.race([
    until("the reconciler to listen", () => /"msg":"listening","url":"([^"]+)"/.exec(log)?.[1], 120_000),
    dead,
  ]);
  return {
    child,
    url,
    reconciled: () => reconciled,
    watch: () => watch,
    ready: async () => {
      if (child.exitCode !== null) await dead;
      return fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
    },
    cpuMs: () => procStat(child.pid!).cpuMs,
    rss: () => {
      const s = procStat(child.pid!);
      return { now: s.rssMiB, peak: s.hwmMiB };
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}

export interface Startup {
  wallMs: number;
  cpuMs: number;
  peakMiB: number;
  /** Steady RSS and JS heap in use a few seconds after the pass (when asked for). */
  steady?: { rssMiB: number; heapMiB: number };
  watch?: string;
}

/** Where a reconciler run keeps what it writes (its cache and secret files), deleted when the bench ends. */
export interface RunFolders {
  base: string;
  repo: string;
  out: string;
  /** Folders to delete once the bench is over. */
  aside: string[];
}

function runLaunch(f: RunFolders, name: string): Launch {
  const cacheDir = join(f.base, `reconciler-cache-${name}`);
  rmSync(cacheDir, { recursive: true, force: true });
  f.aside.push(cacheDir, join(f.base, `reconciler-secrets-${name}`));
  return deploymentLaunch({ repo: f.repo, out: f.out, cacheDir, secrets: join(f.base, `reconciler-secrets-${name}`) });
}

/**
 * One start-up pass: a new reconciler (its own empty cache folder) over the target as the last run left it, measured
 * until /readyz answers (the pass is over); with `steady`, its memory a few seconds later.
 */
export async function startupRun(
  cli: string[],
  f: RunFolders,
  name: string,
  flags: string[] | undefined,
  steady: boolean,
): Promise<Startup> {
  const launch = runLaunch(f, name);
  const t0 = Date.now();
  const r = await start(cli, launch, f.base, flags ?? launch.nodeFlags);
  try {
    await until("the start-up pass", async () => ((await r.ready()) ? true : undefined), 3_600_000, 200);
    const out: Startup = { wallMs: Date.now() - t0, cpuMs: r.cpuMs(), peakMiB: r.rss().peak, watch: r.watch() };
    if (steady) {
      await sleep(3000);
      const rss: number[] = [];
      for (let i = 0; i < 5; i++) {
        rss.push(r.rss().now);
        await sleep(1000);
      }
      const metrics = await (await fetch(`${r.url}/metrics`)).text();
      const heap = Number(/^vc_reconciler_nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? NaN) / 1048576;
      out.steady = { rssMiB: med(rss), heapMiB: heap };
    }
    return out;
  } finally {
    await r.stop();
  }
}

/** Changes made so far by every run: each sets a CPU request no earlier change set. */
let changesMade = 0;

export interface Latency {
  /** The change (the commit, or the file write) until the cluster's StatefulSet manifest holds it. */
  ms: number;
  cluster: string;
  /** Where the cluster is in the pass's order (0-based) of `of`. */
  position: number;
  of: number;
  /** `reconciled` lines when the change was made, and when it was applied. */
  reconciledBefore: number;
  reconciledAt: number;
  /** Whether the start-up pass was still running when the change was applied. */
  duringPass: boolean;
  watch?: string;
}

/** The StatefulSet manifest of a cluster in the dir: target. */
function statefulSetFile(out: string, cluster: string): string {
  const dir = join(out, cluster);
  const hit = readdirSync(dir, { recursive: true, withFileTypes: true }).find(
    (e) => e.isFile() && e.name.startsWith("statefulset.apps_"),
  );
  if (!hit) throw new Error(`no StatefulSet manifest for ${cluster} under ${out}`);
  return join(hit.parentPath, hit.name);
}

/**
 * A user's change during the start-up pass: a new reconciler, and once `into` clusters are reconciled, the values file
 * of `cluster` (near the end of the pass's order) gets a new CPU request, committed in `git` mode; measured from the
 * commit (or the write) until the cluster's StatefulSet manifest in the target holds it.
 */
export async function latencyRun(
  cli: string[],
  f: RunFolders,
  name: string,
  mode: "git" | "folder",
  cluster: string,
  order: readonly string[],
  into: number,
): Promise<Latency> {
  const launch = runLaunch(f, name);
  const r = await start(cli, launch, f.base, launch.nodeFlags);
  try {
    await until("the start-up pass to be under way", () => (r.reconciled() >= into ? true : undefined), 3_600_000);
    if (await r.ready()) throw new Error(`the start-up pass ended before ${into} clusters were reconciled`);
    const values = join(f.repo, "clusters", cluster, "values.yaml");
    const cpu = `${301 + changesMade++}m`;
    const manifest = statefulSetFile(f.out, cluster);
    const text = readFileSync(values, "utf8").replace(/cpu: \d+m/, `cpu: ${cpu}`);
    const reconciledBefore = r.reconciled();
    let t1: number;
    if (mode === "git") {
      writeFileSync(values, text);
      t1 = Date.now();
      execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qam", cpu], {
        cwd: f.repo,
        stdio: "pipe",
      });
    } else {
      t1 = Date.now();
      writeFileSync(values, text);
    }
    await until(
      `${cluster} applied`,
      () => (readFileSync(manifest, "utf8").includes(`cpu: ${cpu}`) ? true : undefined),
      3_600_000,
      10,
    );
    const ms = Date.now() - t1;
    const reconciledAt = r.reconciled();
    const duringPass = !(await r.ready());
    return {
      ms,
      cluster,
      position: order.indexOf(cluster),
      of: order.length,
      reconciledBefore,
      reconciledAt,
      duringPass,
      watch: r.watch(),
    };
  } finally {
    await r.stop();
  }
}
