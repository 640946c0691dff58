// Benchmark: the reconciler following a 1,000-cluster fleet served over HTTP by `git http-backend`: time from a
// pushed commit changing one cluster (announced by a signed webhook) to its applied objects, the API requests
// that costs, and the reconciler's resident memory with the fleet loaded (it runs as its own process).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { sign } from "../src/reconciler/webhook.js";
import { ANNOTATIONS } from "../src/translate/keys.js";
import { startGitServer, TestRepo } from "../test/support/git-server.js";
import { startKubeServer } from "../test/support/kube-server/index.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const PUSHES = 7;
const FLUX_KUSTOMIZE_CONTROLLER_MIB = 223;
const ROOT = resolve(fileURLToPath(import.meta.url), "../..");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs: number, everyMs = 2): Promise<T> {
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

export async function run(ctx: BenchContext): Promise<void> {
  const repo = new TestRepo("fleet");
  await generateFleet(repo.work, { clusters: CLUSTERS, meshPerCluster: MESH });
  repo.commit("fleet");
  const git = await startGitServer(repo.root);
  const kube = await startKubeServer();
  const secretFile = join(ctx.workDir, "reconcile-webhook-secret");
  writeFileSync(secretFile, "bench-secret\n");
  let child: ChildProcess | undefined;
  try {
    child = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", "reconcile", "--repo", `${git.url}/${repo.path}`, "--target", "kube", "--kubeconfig", kube.kubeconfigPath,
        "--context", "test", "--listen", "127.0.0.1:0", "--webhook-secret-file", secretFile, "--interval", "1h", "--resync", "1h",
        "--cache-dir", join(ctx.workDir, "reconcile-cache"), "--concurrency", "8"],
      { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    const started = Date.now();
    const url = await until("the reconciler to listen", () => /"msg":"listening","url":"([^"]+)"/.exec(log)?.[1], 120_000, 20);
    await until("the first full reconcile", async () => (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) || undefined, 1_800_000, 200);
    const firstMs = Date.now() - started;
    const objects = kube.requests.filter((r) => r.method === "PATCH").length;
    ctx.report("first full reconcile (clone, validate, render, apply)", firstMs / 1000, "s", `${CLUSTERS} clusters, ${objects} server-side applies incl. status`);
    const rssLoaded = rssMiB(child.pid!);

    const times: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < PUSHES; i++) {
      const cluster = fleetClusterName((i * 97 + 13) % CLUSTERS);
      const file = join(repo.work, "clusters", cluster, "values.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace(/cpu: \d+m/, `cpu: ${300 + i}m`));
      const commit = repo.commit(`bench: change ${cluster}`);
      kube.resetRequests();
      const body = JSON.stringify({ ref: "refs/heads/main", after: commit });
      const t0 = process.hrtime.bigint();
      const res = await fetch(`${url}/webhook`, { method: "POST", body, headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("bench-secret", body) } });
      if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
      await until(`${cluster} at ${commit}`, () => kube.get("apps/v1", "StatefulSet", `vc-${cluster}`, cluster)?.metadata.annotations?.[ANNOTATIONS.revision] === commit || undefined, 60_000);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await sleep(300); // let the status write land before counting
      const touched = kube.requests.filter((r) => !decodeURIComponent(`${r.path}?${r.query}`).includes(cluster));
      if (touched.length > 0) throw new Error(`requests outside ${cluster}: ${touched.map((r) => `${r.method} ${r.path}`).join(", ")}`);
      requests.push(kube.requests.length);
    }
    times.sort((a, b) => a - b);
    requests.sort((a, b) => a - b);
    ctx.report("push -> applied, one cluster changed (webhook)", times[Math.floor(times.length / 2)]!, "ms", `median of ${PUSHES}; min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)}`);
    ctx.report("API requests per one-cluster commit", requests[Math.floor(requests.length / 2)]!, "", `all for that cluster: status GET, one LIST per kind, the changed objects' applies, status write; fleet has ${CLUSTERS} clusters`);
    const rss = rssMiB(child.pid!);
    ctx.report("reconciler resident memory, fleet loaded", rss, "MiB", `after the first full pass ${rssLoaded.toFixed(0)} MiB; Flux kustomize-controller ${FLUX_KUSTOMIZE_CONTROLLER_MIB} MiB for 1,000 Kustomizations`);
  } finally {
    child?.kill("SIGTERM");
    await git.close();
    await kube.close();
    repo.dispose();
  }
}
