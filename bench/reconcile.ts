// Benchmark: the reconciler following a 1,000-cluster fleet served over HTTP by `git http-backend`: time from a
// pushed commit changing one cluster (announced by a signed webhook) to its applied objects, the API requests
// that costs, and the reconciler's resident memory with the fleet loaded (it runs as its own process).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { sign } from "../src/reconciler/webhook.js";
import { ANNOTATIONS } from "../src/translate/keys.js";
import { startGitServer, TestRepo, type GitServer } from "../test/support/git-server.js";
import { startKubeServer } from "../test/support/kube-server/index.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const PUSHES = 7;
const FLUX_KUSTOMIZE_CONTROLLER_MIB = 223;
const ROOT = resolve(fileURLToPath(import.meta.url), "../..");

/** Environment of the reconciler process, as deploy/reconciler/deployment.yaml sets it. */
const CHILD_ENV: Record<string, string> =
  process.env.VC_BENCH_MALLOC_ARENA_MAX === "default" ? {} : { MALLOC_ARENA_MAX: "2" };
/** V8 flags of the reconciler process, as deploy/reconciler/deployment.yaml sets them in NODE_OPTIONS. */
const V8_FLAGS = (process.env.VC_BENCH_V8_FLAGS ?? "--max-old-space-size=192 --max-semi-space-size=2")
  .split(" ")
  .filter(Boolean);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 2,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * The reconciler as an image would run it: one esbuild bundle (esbuild ships with tsx) instead of tsx's loader
 * thread. It lives two folders below the repository root, where the bundled code finds `schemas/` as the sources do.
 */
export function bundle(): string | undefined {
  const dir = join(ROOT, ".vc-cache", "bench-bundle");
  const entry = join(dir, "entry.ts");
  const out = join(dir, "vc.mjs");
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      entry,
      `import { main } from ${JSON.stringify(join(ROOT, "src/cli/main.ts"))};\nprocess.exitCode = await main(process.argv.slice(2));\n`,
    );
    execFileSync(
      join(ROOT, "node_modules/.bin/esbuild"),
      [
        entry,
        "--bundle",
        "--platform=node",
        "--format=esm",
        `--outfile=${out}`,
        "--log-level=error",
        "--banner:js=import { createRequire as benchCreateRequire } from 'node:module'; const require = " +
          "benchCreateRequire(import.meta.url);",
      ],
      { stdio: "pipe" },
    );
    return out;
  } catch {
    return undefined;
  }
}

export async function run(ctx: BenchContext): Promise<void> {
  const repo = new TestRepo("fleet");
  await generateFleet(repo.work, { clusters: CLUSTERS, meshPerCluster: MESH });
  repo.commit("fleet");
  const git = await startGitServer(repo.root);
  const secretFile = join(ctx.workDir, "reconcile-webhook-secret");
  writeFileSync(secretFile, "bench-secret\n");
  try {
    const modes = (process.env.VC_BENCH_RECONCILE_MODES ?? "tsx,bundled").split(",");
    // With the V8 flags and environment deploy/reconciler sets (NODE_OPTIONS, MALLOC_ARENA_MAX).
    if (modes.includes("tsx"))
      await measure(ctx, repo, git, secretFile, "tsx", [...V8_FLAGS, "--import", "tsx", "src/cli/main.ts"]);
    const bundled = modes.includes("bundled") ? bundle() : undefined;
    if (bundled) await measure(ctx, repo, git, secretFile, "bundled", [...V8_FLAGS, bundled]);
    else if (modes.includes("bundled")) ctx.report("bundled run", "skipped", "", "esbuild not found");
  } finally {
    await git.close();
    repo.dispose();
  }
}

async function measure(
  ctx: BenchContext,
  repo: TestRepo,
  git: GitServer,
  secretFile: string,
  mode: string,
  command: string[],
): Promise<void> {
  const kube = await startKubeServer();
  let child: ChildProcess | undefined;
  let peak = 0;
  const sampler = setInterval(() => {
    if (child?.pid) peak = Math.max(peak, rssMiB(child.pid) || 0);
  }, 50);
  try {
    const startChild = async (): Promise<string> => {
      child = spawn(
        process.execPath,
        [
          ...command,
          "reconcile",
          "--repo",
          `${git.url}/${repo.path}`,
          "--target",
          "kube",
          "--kubeconfig",
          kube.kubeconfigPath,
          "--context",
          "test",
          "--listen",
          "127.0.0.1:0",
          "--webhook-secret-file",
          secretFile,
          "--interval",
          "1h",
          "--resync",
          "1h",
          "--cache-dir",
          join(ctx.workDir, `reconcile-cache-${mode}`),
          "--concurrency",
          "8",
        ],
        { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...CHILD_ENV } },
      );
      let log = "";
      child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
      const exited = new Promise<number | null>((r) => child!.once("exit", (code) => r(code)));
      const url = await Promise.race([
        until("the reconciler to listen", () => /"msg":"listening","url":"([^"]+)"/.exec(log)?.[1], 120_000, 20),
        exited.then((code) => Promise.reject(new Error(`reconciler exited (${code}): ${log.slice(-2000)}`))),
      ]);
      await Promise.race([
        until(
          "the first full reconcile",
          async () =>
            (await fetch(`${url}/readyz`).then(
              (r) => r.status === 200,
              () => false,
            )) || undefined,
          1_800_000,
          200,
        ),
        exited.then((code) =>
          Promise.reject(new Error(`reconciler exited (${code}) during the first pass: ${log.slice(-2000)}`)),
        ),
      ]);
      return url;
    };
    const started = Date.now();
    const url = await startChild();
    const firstMs = Date.now() - started;
    const objects = kube.requests.filter((r) => r.method === "PATCH").length;
    ctx.report(
      `[${mode}] first full reconcile (clone, validate, render, apply)`,
      firstMs / 1000,
      "s",
      `${CLUSTERS} clusters, ${objects} server-side applies incl. status`,
    );
    const peakFirst = peak;

    const times: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < PUSHES; i++) {
      const cluster = fleetClusterName((i * 97 + 13) % CLUSTERS);
      const file = join(repo.work, "clusters", cluster, "values.yaml");
      writeFileSync(
        file,
        readFileSync(file, "utf8").replace(/cpu: \d+m/, `cpu: ${300 + i + (mode === "tsx" ? 0 : 50)}m`),
      );
      const commit = repo.commit(`bench: change ${cluster}`);
      kube.resetRequests();
      const body = JSON.stringify({ ref: "refs/heads/main", after: commit });
      const t0 = process.hrtime.bigint();
      const res = await fetch(`${url}/webhook`, {
        method: "POST",
        body,
        headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("bench-secret", body) },
      });
      if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
      await until(
        `${cluster} at ${commit}`,
        () =>
          kube.get("apps/v1", "StatefulSet", `vc-${cluster}`, cluster)?.metadata.annotations?.[ANNOTATIONS.revision] ===
            commit || undefined,
        60_000,
      );
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await sleep(300); // let the status write land before counting
      const touched = kube.requests.filter((r) => !decodeURIComponent(`${r.path}?${r.query}`).includes(cluster));
      if (touched.length > 0)
        throw new Error(`requests outside ${cluster}: ${touched.map((r) => `${r.method} ${r.path}`).join(", ")}`);
      requests.push(kube.requests.length);
    }
    times.sort((a, b) => a - b);
    requests.sort((a, b) => a - b);
    ctx.report(
      `[${mode}] push -> applied, one cluster changed (webhook)`,
      times[Math.floor(times.length / 2)]!,
      "ms",
      `median of ${PUSHES}; min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)}`,
    );
    ctx.report(
      `[${mode}] API requests per one-cluster commit`,
      requests[Math.floor(requests.length / 2)]!,
      "",
      `all for that cluster (status GET, one LIST per kind, applies of the changed objects, status write); the ` +
        `fleet has ${CLUSTERS} clusters`,
    );
    const rss = rssMiB(child!.pid!);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const heap = Number(/^vc_reconciler_nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? NaN) / 1048576;
    ctx.report(
      `[${mode}] reconciler resident memory, fleet loaded`,
      rss,
      "MiB",
      `peak ${Math.max(peak, peakFirst).toFixed(0)} MiB during the first full pass; JS heap in use ` +
        `${heap.toFixed(0)} MiB; Flux kustomize-controller: ${FLUX_KUSTOMIZE_CONTROLLER_MIB} MiB for 1,000 ` +
        `Kustomizations`,
    );

    // A restart over the populated host: the mirror is reused, and the startup full resync lists the whole
    // fleet's inventory (one LIST per kind) and every status (one LIST), and finds nothing to write.
    const first = child!;
    first.kill("SIGTERM");
    await new Promise((r) => first.once("exit", r));
    kube.resetRequests();
    peak = 0;
    const t1 = Date.now();
    await startChild();
    const writes = ["PATCH", "PUT", "POST", "DELETE"].reduce((n, m) => n + kube.countRequests({ method: m }), 0);
    ctx.report(
      `[${mode}] restart: full resync of the populated host, nothing to change`,
      (Date.now() - t1) / 1000,
      "s",
      `${kube.countRequests({ method: "GET" })} GET (LISTs), ${writes} writes; peak ${peak.toFixed(0)} MiB resident`,
    );
  } finally {
    clearInterval(sampler);
    child?.kill("SIGTERM");
    await kube.close();
  }
}
