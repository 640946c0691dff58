// Benchmark of progressive rollouts (issue #22 section 3) over a 1,000-cluster fleet with fleet/rollout.yaml:
// 1. the plan (`vc diff`) of a base change, every cluster pinned (and, apart, without fleet/rollout.yaml), against a
//    full `vc render` of the fleet (target ≤ 2×);
// 2. one wave's bookkeeping: the reconciler's requests per rollout tick, counted at the API test server, for waves of
//    different sizes (target O(clusters in the wave)), and its writes to clusters outside the wave (target none).
//    VC_BENCH_CLUSTERS (default 1000), VC_BENCH_ROLLOUT_TICKS (ticks counted per wave, default 3); VC_BENCH_DEBUG=1
//    prints each window's requests by verb and resource; `--only=waves` or `--only=plan` runs one part.
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { bundle } from "./reconcile.js";
import { buildDist } from "./scale.js";
import type { RolloutRecord } from "../src/rollout/types.js";
import type { Rule } from "../test/support/kube-server/index.js";
import { StandInControllers } from "../test/support/kube-status.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 3;
const RUNS = 3;
const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const HOOK = join(ROOT, "bench/usage-hook.mjs");
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const baseValues = (tag: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n`;

/**
 * The rollout of the bench: the canary, then 1 % of the fleet, then 11 % (each wave waiting for resume after its gate),
 * then the rest.
 */
export const BENCH_WAVES = `waves:
  - name: canary
    selector:
      matchLabels:
        canary: "true"
    pause: manual
  - name: one-percent
    percent: 1
    pause: manual
  - name: eleven-percent
    percent: 11
    pause: manual
  - name: rest
maxUnavailable: "100%"
healthGate:
  timeout: 1h
onFailure: halt
`;

/**
 * The fleet: bench/fleet.ts's clusters with labels (the first one the canary, tiers by thirds), a base and the rollout.
 */
export async function generateRolloutFleet(root: string, clusters: number): Promise<void> {
  await generateFleet(root, { clusters, meshPerCluster: MESH });
  for (let i = 0; i < clusters; i++) {
    appendFileSync(
      join(root, "clusters", fleetClusterName(i), "cluster.yaml"),
      `labels:\n  tier: ${i % 3 === 0 ? "prod" : "dev"}\n${i === 0 ? '  canary: "true"\n' : ""}`,
    );
  }
  mkdirSync(join(root, "fleet"), { recursive: true });
  writeFileSync(join(root, "fleet/values.yaml"), baseValues("1.0.0"));
  writeFileSync(join(root, "fleet/groups.yaml"), "groups:\n  prod:\n    matchLabels:\n      tier: prod\n");
  writeFileSync(
    join(root, "fleet/values.prod.yaml"),
    "controlPlane:\n  statefulSet:\n    resources:\n      limits:\n        cpu: 4000m\n",
  );
  writeFileSync(join(root, "fleet/rollout.yaml"), BENCH_WAVES);
}

/**
 * How `vc` is started: the bundled CLI, as an image or an installed package runs it (tsx's loader only without
 * esbuild).
 */
let cliArgs: string[] | undefined;
function cli(): string[] {
  if (!cliArgs) {
    const bundled = bundle();
    buildDist(); // the validation workers run dist/app when it is fresh, as in the image
    cliArgs = bundled ? [bundled] : ["--import", "tsx", join(ROOT, "src/cli/main.ts")];
  }
  return cliArgs;
}

/**
 * `vc <args>` in a process of its own, as a user or CI runs it; resolves with its exit code, how long it took and the
 * CPU it spent (user + system, validation workers included: bench/usage-hook.mjs).
 */
let calls = 0;
function vc(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; ms: number; cpuMs: number; stdout: string; stderr: string }> {
  const command = cli();
  const usageFile = join(tmpdir(), `vc-bench-rollout-usage-${process.pid}-${calls++}.json`);
  const start = process.hrtime.bigint();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", HOOK, ...command, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1", VC_BENCH_USAGE_FILE: usageFile, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      let cpuMs = NaN;
      try {
        cpuMs = (JSON.parse(readFileSync(usageFile, "utf8")) as { cpuMs: number }).cpuMs;
        rmSync(usageFile, { force: true });
      } catch {
        // the process died before its exit hook: no CPU figure
      }
      done({ code: code ?? 2, ms, cpuMs, stdout, stderr });
    });
  });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "rollout");
  await generateRolloutFleet(root, CLUSTERS);
  git(root, "init", "-q", "-b", "main");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "fleet");
  const { startKubeServer } = await import("../test/support/kube-server/index.js");
  const server = await startKubeServer();
  try {
    const applied = await vc([
      "apply",
      root,
      "--target",
      "kube",
      "--kubeconfig",
      server.kubeconfigPath,
      "--allow-mass-prune",
    ]);
    if (applied.code !== 0) throw new Error(`vc apply: ${applied.code}\n${applied.stderr.slice(-2000)}`);
    const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
    if (only !== "plan") await waveBookkeeping(ctx, root, server);
    else {
      // The pinned plan needs each cluster's recorded base, which the reconciler's first pass with fleet/rollout.yaml
      // writes (the waves part runs one); alone, one pass of `vc reconcile --once` records them.
      const once = await vc([
        "reconcile",
        "--once",
        "--repo",
        root,
        "--target",
        "kube",
        "--kubeconfig",
        server.kubeconfigPath,
      ]);
      if (once.code !== 0) throw new Error(`vc reconcile --once: ${once.code}\n${once.stderr.slice(-2000)}`);
    }
    if (only !== "waves") await planVersusRender(ctx, root, server);
  } finally {
    await server.close();
  }
}

type Server = Awaited<ReturnType<typeof import("../test/support/kube-server/index.js").startKubeServer>>;

const FULL: Rule[] = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TICKS = Number(process.env.VC_BENCH_ROLLOUT_TICKS ?? 3);

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The rollout record as the reconciler last wrote it (read in-process: not a request). */
function recordOf(server: Server): RolloutRecord | undefined {
  const cm = server
    .list("v1", "ConfigMap", "vc-system")
    .find((c) => c.metadata.labels?.["vc.orch.io/record"] === "rollout");
  const text = (cm as { data?: Record<string, string> } | undefined)?.data?.rollout;
  return text ? (JSON.parse(text) as RolloutRecord) : undefined;
}

/**
 * Part 2: the reconciler (a process polling every second: `--interval 1s`, so a rollout ticks every second) drives a
 * rollout of a base change; each wave is held Progressing (no controller reports its moved clusters) for a few ticks,
 * whose requests are counted at the server, per tick (a tick reads the rollout record once: its GETs of the record
 * count the ticks). Then the stand-in controllers report, the wave passes its gate and waits for resume. Writes outside
 * the moved clusters are counted over the whole rollout.
 */
async function waveBookkeeping(ctx: BenchContext, root: string, server: Server): Promise<void> {
  server.addUser("controllers", FULL, "controllers");
  server.addUser("reconciler", FULL, "reconciler");
  const hosts = new StandInControllers({
    request: (method, path, body, opts) =>
      jsonRequest(server.url, "controllers", method, path, body, opts?.contentType),
  });
  await hosts.settle();
  const kubeconfig = server.writeKubeconfig({ token: "reconciler" });
  const child = spawn(
    process.execPath,
    [
      ...cli(),
      "reconcile",
      "--repo",
      root,
      "--target",
      "kube",
      "--kubeconfig",
      kubeconfig,
      "--resync",
      "1h",
      "--interval",
      "1s",
      "--cache-dir",
      join(root, "..", "rollout-cache"),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let log = "";
  let reconciled = 0;
  // The reconciler logs JSON lines on stderr, one `reconciled` line per cluster run.
  child.stdout!.on("data", (d) => (log = (log + d).slice(-20_000)));
  child.stderr!.on("data", (d) => {
    reconciled += (String(d).match(/"msg":"reconciled"/g) ?? []).length;
    log = (log + d).slice(-20_000);
  });
  try {
    // The first pass that sees fleet/rollout.yaml pins every cluster at the base it is at.
    await until(
      `every record to be pinned:\n${log}`,
      () => {
        const records = server
          .list("v1", "ConfigMap", "vc-system")
          .filter((c) => c.metadata.labels?.["vc.orch.io/record"] === "record");
        return (
          records.length === CLUSTERS && records.every((r) => !!(r as { data?: Record<string, string> }).data?.base)
        );
      },
      30 * 60_000,
    );
    const mark = server.requests.length;
    writeFileSync(join(root, "fleet/values.yaml"), baseValues("1.1.0"));
    git(root, "commit", "-q", "-am", "base: 1.1.0");
    const sha = git(root, "rev-parse", "HEAD");
    const before = reconciled;
    const started = await until(
      `the rollout of ${sha} to start:\n${log}`,
      () => recordOf(server)?.to.revision === sha && recordOf(server),
      10 * 60_000,
    );
    // The commit's own pass reconciles every cluster the base change reaches (each at its pin: no write to a held
    // cluster's objects), as any base change does without rollouts; the ticks measured come after it.
    await until(`the pass of ${sha}:\n${log}`, () => reconciled - before >= CLUSTERS, 30 * 60_000);
    const rows: Array<{ wave: string; moved: number; perTick: number; ticks: number }> = [];
    let waiting: { perTick: number; ticks: number } | undefined;
    // Every wave but the last (the rest of the fleet): held, measured, then let pass (an empty wave passes at once).
    for (let w = 0; w < started.waves.length - 1; w++) {
      const size = started.waves[w]!.clusters.length;
      if (size > 0) {
        await until(
          `wave ${w} to move:\n${log}`,
          () => {
            const r = recordOf(server)!;
            return (
              r.id === started.id &&
              r.wave === w &&
              r.phase === "Progressing" &&
              r.waves[w]!.clusters.every((c) => r.moved[c]?.at === "to")
            );
          },
          10 * 60_000,
        );
        await sleep(1500);
        const { perTick, ticks, window } = await ticksOf(server, TICKS);
        rows.push({ wave: started.waves[w]!.name, moved: size, perTick, ticks });
        if (process.env.VC_BENCH_DEBUG) {
          const h = new Map<string, number>();
          for (const q of window) {
            const k =
              `${q.verb} ${q.resource ?? q.path}${q.subresource ? `/${q.subresource}` : ""} ` +
              `ns=${q.namespace ?? "-"} ${q.name ? "named" : ""} ${q.query.slice(0, 80)}`;
            h.set(k, (h.get(k) ?? 0) + 1);
          }
          process.stderr.write(
            `${[...h]
              .sort((a, b) => b[1] - a[1])
              .map(([k, n]) => `${n}\t${k}`)
              .join("\n")}\n`,
          );
        }
        // The wave passes its gate once the controllers report its clusters.
        hosts.start(200);
      }
      const passed = await until(
        `wave ${w} to pass:\n${log}`,
        () => {
          const r = recordOf(server)!;
          return r.wave > w || (r.wave === w && r.phase === "Waiting") ? r : undefined;
        },
        10 * 60_000,
      );
      await hosts.stop();
      if (passed.phase === "Waiting" && !waiting) {
        // The fixed part of a tick: waiting out a manual pause, no cluster in flight.
        waiting = await ticksOf(server, TICKS);
      }
      if (passed.phase === "Waiting" && w < started.waves.length - 2) {
        const resumed = await vc(["rollout", "resume", "--repo", root, "--kubeconfig", server.kubeconfigPath]);
        if (resumed.code !== 0)
          throw new Error(`vc rollout resume: ${resumed.code} ${resumed.stdout}${resumed.stderr}`);
      }
    }
    const record = recordOf(server)!;
    const movedNamespaces = new Set(Object.keys(record.moved).map((c) => `vc-${c}`));
    const writes = server.requests
      .slice(mark)
      .filter(
        (q) => q.user === "reconciler" && ["create", "update", "patch", "delete", "deletecollection"].includes(q.verb),
      );
    const outside = writes.filter(
      (q) => q.namespace?.startsWith("vc-") && q.namespace !== "vc-system" && !movedNamespaces.has(q.namespace),
    );
    if (waiting)
      ctx.report(
        "requests per rollout tick while waiting for resume (no cluster in flight)",
        waiting.perTick,
        "requests",
        `mean of ${waiting.ticks} ticks`,
      );
    for (const r of rows) {
      ctx.report(
        `wave ${r.wave}: requests per rollout tick with ${r.moved} moved cluster(s) held Progressing`,
        r.perTick,
        "requests",
        `mean of ${r.ticks} ticks; ${(r.perTick / r.moved).toFixed(2)} per cluster`,
      );
    }
    ctx.report(
      `writes to clusters outside the waves moved (${CLUSTERS - movedNamespaces.size} clusters), whole rollout`,
      outside.length,
      "requests",
      "target 0",
    );
    const movedNames = Object.keys(record.moved);
    const recordWrites = writes.filter((q) => q.namespace === "vc-system" && q.name?.startsWith("vc-record-"));
    const recordsOutside = recordWrites.filter((q) => !movedNames.some((c) => q.name!.startsWith(`vc-record-${c}-`)));
    ctx.report(
      `writes to the ${movedNamespaces.size} moved clusters' objects, whole rollout`,
      writes.filter((q) => movedNamespaces.has(q.namespace ?? "")).length,
      "requests",
    );
    ctx.report(
      "writes to vc's records (rollout record, snapshots, cluster records), whole rollout",
      writes.filter((q) => q.namespace === "vc-system").length,
      "requests",
      `${recordsOutside.length} to records of clusters outside the waves moved: the commit's pass, as for any ` +
        `base change`,
    );
    const aborted = await vc(["rollout", "abort", "--repo", root, "--kubeconfig", server.kubeconfigPath]);
    if (aborted.code !== 0) throw new Error(`vc rollout abort: ${aborted.code} ${aborted.stdout}${aborted.stderr}`);
    hosts.start(200);
    await until(`the rollout to be aborted:\n${log}`, () => recordOf(server)?.phase === "Aborted", 10 * 60_000);
    await hosts.stop();
  } finally {
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await gone;
  }
}

/**
 * The reconciler's requests per tick, counted at the server: a tick (a pass) starts with one GET of the rollout
 * record, so the requests from one such GET to the next are one tick's. Waits for `n` whole ticks.
 */
async function ticksOf(
  server: Server,
  n: number,
): Promise<{ perTick: number; ticks: number; window: Server["requests"] }> {
  const from = server.requests.length;
  const isTick = (q: Server["requests"][number]) =>
    q.user === "reconciler" && q.method === "GET" && q.resource === "configmaps" && !!q.name?.startsWith("vc-rollout-");
  await until(`${n} rollout ticks`, () => server.requests.slice(from).filter(isTick).length > n, 15 * 60_000);
  const mine = server.requests.slice(from).filter((q) => q.user === "reconciler");
  const starts = mine.map((q, i) => (isTick(q) ? i : -1)).filter((i) => i >= 0);
  const window = mine.slice(starts[0], starts[n]);
  return { perTick: window.length / n, ticks: n, window };
}

/**
 * A JSON request to the API test server as `token` (the stand-in controllers' identity, apart from the reconciler's).
 */
async function jsonRequest<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; body: T }> {
  const res = await fetch(url + path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: "application/json",
      ...(body === undefined ? {} : { "Content-Type": contentType }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed as T };
}

/**
 * Part 1: `vc diff` of a base change against `vc render` of the fleet, all as processes. With fleet/rollout.yaml the
 * plan renders each cluster where the reconciler would: the new base has no rollout on the host yet, so every cluster
 * is held at its recorded base (rendered from its snapshot) and the plan changes nothing. Without it (the file removed
 * from the work tree) the plan is of every cluster at the new base.
 */
async function planVersusRender(ctx: BenchContext, root: string, server: Server): Promise<void> {
  const kc = ["--target", "kube", "--kubeconfig", server.kubeconfigPath];
  writeFileSync(join(root, "fleet/values.yaml"), baseValues("1.2.0"));
  git(root, "commit", "-q", "-am", "base: 1.2.0");
  const renders: number[] = [];
  const pinned: number[] = [];
  const unpinned: number[] = [];
  const cpu = { renders: [] as number[], pinned: [] as number[], unpinned: [] as number[] };
  let held = 0;
  let planned = "";
  for (let i = 0; i < RUNS; i++) {
    const r = await vc(["render", root, "-o", "yaml"]);
    if (r.code !== 0) throw new Error(`vc render: ${r.code}\n${r.stderr.slice(-2000)}`);
    renders.push(r.ms);
    cpu.renders.push(r.cpuMs);
    const p = await vc(["diff", root, ...kc, "--exit-code"]);
    if (p.code !== 0)
      throw new Error(
        `vc diff (pinned): expected exit 0 (every cluster held at its base), got ` +
          `${p.code}\n${p.stdout.slice(0, 2000)}${p.stderr.slice(-2000)}`,
      );
    pinned.push(p.ms);
    cpu.pinned.push(p.cpuMs);
    held = p.stderr.split("\n").filter((l) => /stays at base|held by rollout/.test(l)).length;
    rmSync(join(root, "fleet/rollout.yaml"));
    try {
      const u = await vc(["diff", root, ...kc, "--exit-code"]);
      if (u.code !== 1)
        throw new Error(
          `vc diff (no rollout file): expected exit 1 (changes), got ${u.code}\n${u.stderr.slice(-2000)}`,
        );
      unpinned.push(u.ms);
      cpu.unpinned.push(u.cpuMs);
      planned = u.stdout.split("\n").find((l) => /^changes \d+ clusters/.test(l)) ?? u.stdout.split("\n")[0] ?? "";
    } finally {
      writeFileSync(join(root, "fleet/rollout.yaml"), BENCH_WAVES);
    }
  }
  const runsOf = (xs: number[]) => `runs ${xs.map((x) => Math.round(x)).join(", ")}`;
  const r = med(renders);
  const p = med(pinned);
  const u = med(unpinned);
  ctx.report(
    "vc is run as",
    cli().length === 1 ? "the bundled CLI" : "tsx (esbuild not found)",
    "",
    "each command a process of its own",
  );
  ctx.report(
    `vc render of ${CLUSTERS} clusters (a process)`,
    r,
    "ms",
    `median of ${RUNS}; ${runsOf(renders)}; CPU ${Math.round(med(cpu.renders))} ms`,
  );
  ctx.report(
    "vc diff of a fleet/values.yaml change with fleet/rollout.yaml: every cluster held at its pinned base",
    p,
    "ms",
    `median of ${RUNS}; ${runsOf(pinned)}; CPU ${Math.round(med(cpu.pinned))} ms; ${held} clusters held, no change ` +
      `planned`,
  );
  ctx.report(
    "  pinned plan / render",
    p / r,
    "×",
    `target ≤ 2; in CPU of the vc process ${(med(cpu.pinned) / med(cpu.renders)).toFixed(2)}×`,
  );
  ctx.report(
    "vc diff of the same change without fleet/rollout.yaml: every cluster at the new base",
    u,
    "ms",
    `median of ${RUNS}; ${runsOf(unpinned)}; CPU ${Math.round(med(cpu.unpinned))} ms; ${planned.slice(0, 90)}`,
  );
  ctx.report(
    "  unpinned plan / render",
    u / r,
    "×",
    `target ≤ 2; in CPU of the vc process ${(med(cpu.unpinned) / med(cpu.renders)).toFixed(2)}×`,
  );
}
