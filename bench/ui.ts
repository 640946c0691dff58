// Benchmark: the fleet page served by the reconciler (its own process, the Deployment's flags) at fleet scale: the
// first view complete in a real browser and its transfer, a filter answered by the API, and the reconciler's resident
// memory with 10 pages open and streaming against without them. Two fleet shapes; medians of 3.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { buildPage } from "../scripts/build-ui.js";
import { DirStatusStore } from "../src/records/dir-store.js";
import { freePort } from "../test/support/requires.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const arg = (name: string, fallback: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** V8 flags and environment of the reconciler, as deploy/reconciler/deployment.yaml sets them. */
const V8_FLAGS = ["--max-old-space-size=256", "--max-semi-space-size=2"];
const CHILD_ENV = { MALLOC_ARENA_MAX: "2" };
const PAGES = 10;
const BROWSER_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

interface Shape {
  name: string;
  mesh: number;
  /** Every n-th cluster is recorded Degraded with a reason (0: none). */
  degradedEvery: number;
  /** Labels on each cluster.yaml. */
  labels: number;
}

const SHAPES: Shape[] = [
  {
    name: "settled: 4 mesh documents a cluster, every cluster Healthy, 2 labels",
    mesh: 4,
    degradedEvery: 0,
    labels: 2,
  },
  {
    name: "troubled: 20 mesh documents a cluster, 1 in 10 Degraded with a reason, 6 labels",
    mesh: 20,
    degradedEvery: 10,
    labels: 6,
  },
];

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "b@example.com",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "b@example.com",
    },
  });

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function until(
  what: string,
  ok: () => Promise<boolean>,
  timeoutMs: number,
  alive: () => void = () => {},
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok().catch(() => false))) {
    alive();
    if (Date.now() > end) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(500);
  }
}

/** The first view in a fresh page: milliseconds from navigation to the table and header drawn, bytes transferred. */
async function firstView(context: BrowserContext, url: string): Promise<{ ms: number; bytes: number }> {
  const page = await context.newPage();
  try {
    await page.goto(url);
    await page.waitForSelector("tr[data-cluster]", { timeout: 60_000 });
    await page.waitForSelector(".summary .total", { timeout: 60_000 });
    // Run in the page: its performance entries (this file is type-checked without the DOM library).
    return await page.evaluate(() => {
      type Entry = { name: string; transferSize: number };
      const perf = performance as unknown as { getEntriesByType(t: string): Entry[]; now(): number };
      const nav = perf.getEntriesByType("navigation")[0]!;
      // The event stream stays open (its transfer is not the first view's).
      const rest = perf.getEntriesByType("resource").filter((r) => !r.name.endsWith("/api/v1/events"));
      return { ms: perf.now(), bytes: nav.transferSize + rest.reduce((n, r) => n + r.transferSize, 0) };
    });
  } finally {
    await page.close();
  }
}

async function runShape(ctx: BenchContext, shape: Shape, clusters: number): Promise<void> {
  const dir = mkdtempSync(join(ctx.workDir, "ui-"));
  const repo = join(dir, "repo");
  const out = join(dir, "out");
  await generateFleet(repo, { clusters, meshPerCluster: shape.mesh });
  const teams = ["payments", "search", "checkout", "catalog"];
  for (let i = 0; i < clusters; i++) {
    const labels = [
      `team: ${teams[i % 4]}`,
      `tier: ${i % 3 ? "prod" : "dev"}`,
      `region: r${i % 5}`,
      `ring: "${i % 3}"`,
      `owner: o${i % 50}`,
      `cost: c${i % 7}`,
    ];
    appendFileSync(
      join(repo, "clusters", fleetClusterName(i), "cluster.yaml"),
      `labels:\n${labels
        .slice(0, shape.labels)
        .map((l) => `  ${l}\n`)
        .join("")}`,
    );
  }
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "fleet: the generated clusters");
  // The health a live host would have given: recorded before the reconciler starts, kept by its runs.
  const store = new DirStatusStore(out);
  if (shape.degradedEvery)
    for (let i = 0; i < clusters; i += shape.degradedEvery) {
      const name = fleetClusterName(i);
      await store.write({
        cluster: name,
        hostNamespace: `vc-${name}`,
        history: [],
        health: "Degraded",
        healthReason: `pod ${name}-0: CrashLoopBackOff: back-off restarting failed container syncer`,
      });
    }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const started = Date.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...V8_FLAGS,
      join(ROOT, "bin/vc.js"),
      "reconcile",
      "--repo",
      repo,
      "--target",
      `dir:${out}`,
      "--listen",
      `127.0.0.1:${port}`,
      "--interval",
      "1h",
      "--resync",
      "1h",
      "--cache-dir",
      join(dir, "cache"),
    ],
    { env: { ...process.env, ...CHILD_ENV }, stdio: ["ignore", "ignore", "pipe"] },
  );
  // The reconciler's own account of an end nobody asked for (its log goes nowhere; its errors are kept, bounded).
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const alive = () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the reconciler ended (${child.exitCode ?? child.signalCode}) before the bench did:\n${stderr}`);
  };
  const profile = mkdtempSync(join(tmpdir(), "vc-bench-chromium-"));
  let context: BrowserContext | undefined;
  try {
    await until(
      "the reconciler's first pass",
      async () => (await fetch(`${url}readyz`)).status === 200,
      3_600_000,
      alive,
    );
    ctx.report(`${clusters} clusters, first pass`, (Date.now() - started) / 1000, "s", shape.name);
    ctx.report("load average of the machine (1 min) before the measures", loadavg()[0]!, "", `${cpus().length} cores`);
    await sleep(3000);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.VC_CHROMIUM ?? "/usr/bin/chromium",
      headless: true,
      args: BROWSER_FLAGS,
    });
    await firstView(context, url); // the browser's own start, not the page's
    const views: Array<{ ms: number; bytes: number }> = [];
    for (let i = 0; i < 3; i++) views.push(await firstView(context, url));
    ctx.report("first view complete in the browser", median(views.map((v) => v.ms)), "ms", "target <= 1000 ms");
    ctx.report("first view transfer", Math.round(median(views.map((v) => v.bytes)) / 1024), "KiB", "target <= 200 KB");
    const filters = ["q=payments-00&sort=health", "health=Degraded&label=tier%3Dprod", "sort=drift&order=desc&q=r3"];
    for (const f of filters) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`${url}api/v1/clusters?${f}`);
        await res.text();
        times.push(performance.now() - t0);
      }
      ctx.report(`filter ${decodeURIComponent(f)}`, median(times), "ms", "target <= 100 ms");
    }
    // Resident memory: without pages, then with 10 pages open on their event streams while clusters change.
    const pid = child.pid!;
    const deltas: number[] = [];
    for (let round = 0; round < 3; round++) {
      await sleep(2000);
      const without = rssMiB(pid);
      const pages = await Promise.all(Array.from({ length: PAGES }, () => context!.newPage()));
      await Promise.all(
        pages.map((p) => p.goto(url).then(() => p.waitForSelector("tr[data-cluster]", { timeout: 60_000 }))),
      );
      // Changes the reconciler settles and streams to every page: a tenth of a chunk's clusters edited.
      for (let i = 0; i < 20; i++)
        appendFileSync(join(repo, "clusters", fleetClusterName(i * 7 + round), "values.yaml"), `# round ${round}\n`);
      git(repo, "commit", "-q", "-am", `round ${round}: 20 clusters`);
      await until(
        "the 20 changed clusters applied",
        async () => {
          const f = (await (await fetch(`${url}api/v1/fleet`)).json()) as {
            progress?: { lastPass?: { revision: string } };
          };
          return f.progress?.lastPass?.revision === git(repo, "rev-parse", "HEAD").trim();
        },
        600_000,
        alive,
      );
      await sleep(3000);
      const withPages = rssMiB(pid);
      deltas.push(withPages - without);
      await Promise.all(pages.map((p) => p.close()));
    }
    ctx.report(`RSS with ${PAGES} pages open and streaming, above without`, median(deltas), "MiB", "target <= 20 MiB");
    ctx.report("RSS of the reconciler", rssMiB(pid), "MiB", `${V8_FLAGS.join(" ")}, MALLOC_ARENA_MAX=2`);
    ctx.report("load average of the machine (1 min) after the measures", loadavg()[0]!, "", `${cpus().length} cores`);
  } finally {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(ctx: BenchContext): Promise<void> {
  const clusters = arg("clusters", 10_000);
  await buildPage();
  for (const shape of SHAPES) {
    process.stdout.write(`  -- ${shape.name}\n`);
    await runShape(ctx, shape, clusters);
  }
}
