// Benchmark: the first apply's throughput on the real API server against the server's own limit (issue #26). A bare
// client (node:https, no vc code: one keep-alive connection per worker, one PATCH application/apply-patch+yaml in
// flight on each) applies the objects vc renders for a generated fleet with 1, 4 and 16 connections; then `vc apply
// --target kube` applies the whole fleet (1,000 clusters; `--clusters=N`) onto a fresh server. Reports requests per
// second of each, and vc's rate as a fraction of the best bare rate. Medians of 3 (`--runs=N`; `--vc-runs=N` for vc
// alone). VC_BENCH_CPU_PROF=DIR writes a CPU profile of each vc run there (node --cpu-prof).
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { generateFleet } from "./fleet.js";
import { bundle } from "./reconcile.js";
import { installExampleCrds, kubeAssets, startRealKube, type RealKube } from "../test/support/real-kube.js";

const HOOK = fileURLToPath(new URL("./usage-hook.mjs", import.meta.url));

const CONNECTIONS = [1, 4, 16];
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const v = Number(arg ? arg.slice(name.length + 3) : fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} needs a positive integer`);
  return v;
}

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

/** kind → { plural, namespaced } from the server's discovery (the bare client knows nothing of vc's catalogue). */
async function discover(
  kube: RealKube,
  apiVersions: Set<string>,
): Promise<Map<string, { plural: string; namespaced: boolean }>> {
  const out = new Map<string, { plural: string; namespaced: boolean }>();
  for (const av of apiVersions) {
    const res = await kube.request<{ resources: Array<{ name: string; kind: string; namespaced: boolean }> }>(
      "GET",
      av.includes("/") ? `/apis/${av}` : `/api/${av}`,
    );
    for (const r of res.body.resources ?? [])
      if (!r.name.includes("/")) out.set(`${av}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
  }
  return out;
}

/**
 * The objects with every namespace and cluster-scoped name suffixed, so that each run creates objects anew on one
 * server.
 */
function suffixed(objs: Obj[], kinds: Map<string, { namespaced: boolean }>, suffix: string): Obj[] {
  return objs.map((o) => {
    const namespaced = kinds.get(`${o.apiVersion}/${o.kind}`)!.namespaced;
    const metadata = namespaced
      ? { ...o.metadata, namespace: `${o.metadata.namespace}${suffix}` }
      : { ...o.metadata, name: `${o.metadata.name}${suffix}` };
    return { ...o, metadata };
  });
}

/**
 * Applies `objs` with `connections` workers over as many keep-alive connections; cluster-scoped objects (namespaces)
 * first. Requests per second.
 */
async function bareApply(
  kube: RealKube,
  objs: Obj[],
  kinds: Map<string, { plural: string; namespaced: boolean }>,
  connections: number,
): Promise<number> {
  const ca = readFileSync(kube.pki.caCert);
  const agent = new https.Agent({ keepAlive: true, maxSockets: connections, ca });
  const pathOf = (o: Obj) => {
    const k = kinds.get(`${o.apiVersion}/${o.kind}`)!;
    const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
    return `${base}${k.namespaced ? `/namespaces/${o.metadata.namespace}` : ""}/${k.plural}/${o.metadata.name}?fieldManager=bare&force=true`;
  };
  const patch = (o: Obj) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify(o);
      const req = https.request(
        `${kube.url}${pathOf(o)}`,
        {
          method: "PATCH",
          agent,
          headers: {
            Authorization: `Bearer ${kube.adminToken}`,
            "Content-Type": "application/apply-patch+yaml",
            Accept: "application/json",
            "Content-Length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () =>
            res.statusCode === 200 || res.statusCode === 201
              ? resolve()
              : reject(new Error(`PATCH ${pathOf(o)}: ${res.statusCode}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const phase = async (items: Obj[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < items.length) await patch(items[next++]!);
      }),
    );
  };
  const t0 = process.hrtime.bigint();
  await phase(objs.filter((o) => !kinds.get(`${o.apiVersion}/${o.kind}`)!.namespaced));
  await phase(objs.filter((o) => kinds.get(`${o.apiVersion}/${o.kind}`)!.namespaced));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  return objs.length / seconds;
}

interface AuditEvent {
  verb: string;
  user: { username: string };
  responseStatus?: { code: number };
  objectRef?: { namespace?: string; resource?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** The server's `apiserver_request_total`, summed by `VERB resource code`. */
async function requestCounts(kube: RealKube): Promise<Map<string, number>> {
  const res = await kube.request<string>("GET", "/metrics");
  const out = new Map<string, number>();
  for (const line of String(res.body).split("\n")) {
    const m = /^apiserver_request_total\{(.*)\} (\d+)/.exec(line);
    if (!m) continue;
    const l = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const key = `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ""} ${l.code}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

async function freshServer(assets: string): Promise<RealKube> {
  const kube = await startRealKube(assets, { extraArgs: ["--service-cluster-ip-range=10.0.0.0/16"] });
  await installExampleCrds(kube);
  const ns = await kube.request("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
  });
  if (ns.status !== 201) throw new Error(`cannot create vc-system: ${ns.status}`);
  return kube;
}

export async function run(ctx: BenchContext): Promise<void> {
  const assets = kubeAssets();
  if (!assets) {
    ctx.report("ssa", "skipped", "", "set VC_KUBE_ASSETS to a folder with kube-apiserver and etcd (docs/testing.md)");
    return;
  }
  const n = option("clusters", 1000);
  const bareClusters = option("bare-clusters", 200);
  const runs = option("runs", 3);
  const vcRuns = option("vc-runs", runs);
  // `--parts=bare` or `--parts=vc` runs one half (default both).
  const parts = (process.argv.find((a) => a.startsWith("--parts="))?.slice(8) ?? "bare,vc").split(",");
  // VC_BENCH_VC_ARGS: more arguments for each `vc apply` (e.g. "--concurrency 8").
  const extraArgs = (process.env.VC_BENCH_VC_ARGS ?? "").split(/\s+/).filter(Boolean);
  const base = join(ctx.workDir, `ssa-${n}`);
  const repo = join(base, "fleet");
  rmSync(base, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  await generateFleet(repo, { clusters: n, meshPerCluster: 5 });
  const bundled = bundle();
  if (!bundled) throw new Error("cannot bundle the CLI (esbuild)");
  // Each vc run reports its own CPU (bench/usage-hook.mjs): the share of the machine it takes from the server.
  const usageFile = join(base, "usage.json");
  const vc = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string; seconds: number; cpuSeconds: number }>(
      (resolveRun) => {
        const t0 = process.hrtime.bigint();
        rmSync(usageFile, { force: true });
        const profile = process.env.VC_BENCH_CPU_PROF
          ? ["--cpu-prof", `--cpu-prof-dir=${process.env.VC_BENCH_CPU_PROF}`]
          : [];
        const child = spawn(process.execPath, [...profile, "--import", HOOK, bundled, ...args], {
          cwd: base,
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, NO_COLOR: "1", VC_BENCH_USAGE_FILE: usageFile },
        });
        const out: Buffer[] = [];
        let stderr = "";
        child.stdout!.on("data", (d: Buffer) => out.push(d));
        child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
        child.once("exit", (code) => {
          let cpuSeconds = NaN;
          try {
            cpuSeconds = (JSON.parse(readFileSync(usageFile, "utf8")) as { cpuMs: number }).cpuMs / 1000;
          } catch {
            // no usage written (the child died before its exit handler): CPU unknown
          }
          resolveRun({
            code,
            stdout: Buffer.concat(out).toString("utf8"),
            stderr,
            seconds: Number(process.hrtime.bigint() - t0) / 1e9,
            cpuSeconds,
          });
        });
      },
    );

  // What vc renders for the fleet: the bare client's objects (of the first `bareClusters` clusters) and vc's object
  // count.
  const rendered = await vc(["render", repo, "-o", "json"]);
  if (rendered.code !== 0) throw new Error(`vc render failed: ${rendered.stderr}`);
  const all = (JSON.parse(rendered.stdout) as { items: Obj[] }).items;
  const firstClusters = new Set<string>();
  const bareObjs = all.filter((o) => {
    const c = o.metadata.labels?.["vc.orch.io/managed-by"] ?? "";
    if (firstClusters.size < bareClusters) firstClusters.add(c);
    return firstClusters.has(c);
  });
  ctx.report(
    "fleet",
    `${n} clusters, ${all.length} host objects`,
    "",
    `bare client: ${bareObjs.length} objects of the first ${firstClusters.size} clusters per run`,
  );

  // The bare client: one server, each run on freshly named objects (all created).
  let best = 0;
  let kube = await freshServer(assets);
  let plurals = new Set<string>();
  try {
    const kinds = await discover(kube, new Set(all.map((o) => o.apiVersion)));
    plurals = new Set(all.map((o) => kinds.get(`${o.apiVersion}/${o.kind}`)!.plural));
    let k = 0;
    for (const c of parts.includes("bare") ? CONNECTIONS : []) {
      const rates: number[] = [];
      for (let i = 0; i < runs; i++) rates.push(await bareApply(kube, suffixed(bareObjs, kinds, `-b${k++}`), kinds, c));
      const rate = med(rates);
      best = Math.max(best, rate);
      ctx.report(
        `bare server-side apply, ${c} connection${c > 1 ? "s" : ""}`,
        rate,
        "requests/s",
        `median of ${runs}: ${rates.map((r) => r.toFixed(0)).join(", ")}`,
      );
    }
  } finally {
    await kube.stop();
  }

  // vc's first apply of the whole fleet, each run on a fresh server.
  const whole: number[] = [];
  const writing: number[] = [];
  for (let i = 0; i < (parts.includes("vc") ? vcRuns : 0); i++) {
    kube = await freshServer(assets);
    try {
      const auditLines = (): string[] => readFileSync(join(kube.dir, "audit.log"), "utf8").split("\n").filter(Boolean);
      const setup = auditLines().length;
      const before = await requestCounts(kube);
      const res = await vc(["apply", repo, "--target", "kube", "--kubeconfig", kube.kubeconfigPath, ...extraArgs]);
      const after = await requestCounts(kube);
      if (res.code !== 0) throw new Error(`vc apply exited ${res.code}: ${res.stderr}`);
      // vc's writes: what the admin wrote after the server's set-up (CRDs, vc-system).
      const events = auditLines()
        .slice(setup)
        .map((l) => JSON.parse(l) as AuditEvent)
        .filter((e) => e.user.username === "admin");
      // Host objects only: not the records (vc-system) nor the TokenReview that names who ran it.
      const created = events.filter(
        (e) =>
          e.responseStatus?.code === 201 &&
          e.objectRef?.namespace !== "vc-system" &&
          plurals.has(e.objectRef?.resource ?? ""),
      ).length;
      const records = events.filter((e) => e.objectRef?.namespace === "vc-system").length;
      if (created !== all.length)
        throw new Error(`vc apply created ${created} objects, the fleet renders ${all.length}`);
      const first = Math.min(...events.map((e) => Date.parse(e.requestReceivedTimestamp)));
      const last = Math.max(...events.map((e) => Date.parse(e.stageTimestamp)));
      whole.push(all.length / res.seconds);
      writing.push(all.length / ((last - first) / 1000));
      ctx.report(
        `vc apply run ${i + 1}`,
        res.seconds,
        "s",
        `${created} objects created, ${records} record writes, ${events.length} writes in all; writes from first ` +
          `to last ${((last - first) / 1000).toFixed(1)} s; vc's own CPU ${res.cpuSeconds.toFixed(1)} s`,
      );
      if (i === 0) {
        // What the apply cost the server per cluster, by verb and resource (the server's own count; includes its own
        // loopback requests).
        const spent = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
        const total = spent.reduce((t, [, v]) => t + v, 0);
        const notApplies = spent
          .filter(([k]) => !k.startsWith("APPLY "))
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6);
        ctx.report(
          "server requests per cluster, first apply",
          total / n,
          "",
          `${(all.length / n).toFixed(0)} objects each; besides applies: ` +
            `${notApplies.map(([k, v]) => `${k} ${(v / n).toFixed(2)}`).join(", ")}`,
        );
      }
    } finally {
      await kube.stop();
    }
  }
  if (whole.length === 0) return;
  const vcRate = med(whole);
  const vcWriting = med(writing);
  ctx.report(
    "vc apply --target kube (first apply)",
    vcRate,
    "objects/s",
    `median of ${vcRuns}, whole command (start, load, render, records)`,
  );
  ctx.report("vc apply --target kube, from its first write to its last", vcWriting, "objects/s", `median of ${vcRuns}`);
  if (best > 0)
    ctx.report(
      "vc / best bare rate",
      vcRate / best,
      "",
      `target >= 0.8; from first to last write ${(vcWriting / best).toFixed(2)}`,
    );
}
