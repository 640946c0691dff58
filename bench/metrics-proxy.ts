// Benchmark of the metrics proxy: added latency (p50/p99) against asking the host directly, requests/s, resident memory.
// Host: the Kubernetes API test server with 10,000 pods, 200 of them in the virtual cluster. Host, proxy and the
// measuring client run in three processes, so that none of them slows another's event loop.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { startKubeServer, type KubeServer } from "../test/support/kube-server/index.js";
import { ANNOTATIONS, LABELS, hostName } from "../src/translate/index.js";
import { METRICS_PROXY_NODE_OPTIONS } from "../src/render/metricsProxy.js";
import type { BenchContext } from "./run.js";

const HOST_NS = "vc-bench";
const CLUSTER = "bench";
const PODS = 10_000;
const OURS = 200;
const VIRTUAL_NAMESPACES = 4; // 50 pods each
const NODES = 20;
const G = "/apis/metrics.orch.io/v1beta1";

function fillHost(server: KubeServer): void {
  for (let n = 0; n < NODES; n++) {
    server.put({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: `node-${n}` },
      status: { capacity: { cpu: "8", memory: "32Gi" } },
    } as any);
    server.setNodeMetrics(`node-${n}`, { cpu: `${100 + n}m`, memory: "2Gi" });
  }
  for (let i = 0; i < PODS; i++) {
    // Every 50th pod is ours; the others belong to 49 other clusters or to nobody.
    const ours = i % (PODS / OURS) === 0;
    const owner = ours ? CLUSTER : i % 7 === 0 ? undefined : `other-${i % 49}`;
    const vns = `ns-${i % VIRTUAL_NAMESPACES}`;
    const vname = `pod-${i}`;
    const name = owner ? hostName(vname, vns, owner) : `host-pod-${i}`;
    const labels: Record<string, string> = { app: `app-${i % 10}`, tier: i % 2 ? "front" : "back" };
    const annotations: Record<string, string> = {};
    if (owner) {
      labels[LABELS.managedBy] = owner;
      labels["vc.orch.io/namespace"] = vns;
      annotations[ANNOTATIONS.objectName] = vname;
      annotations[ANNOTATIONS.objectNamespace] = vns;
    }
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: HOST_NS, labels, annotations },
      spec: { nodeName: `node-${i % NODES}`, containers: [{ name: "main", image: "app" }] },
    } as any);
    server.setPodMetrics(HOST_NS, name, [{ name: "main", usage: { cpu: `${i % 900}m`, memory: `${i % 500}Mi` } }]);
  }
}

/** Child entry: runs the host test server, reports its URL and kubeconfig, answers request counts. */
async function hostMain(): Promise<void> {
  const server = await startKubeServer({ namespaces: ["default", HOST_NS] });
  const start = Date.now();
  fillHost(server);
  process.send!({ url: server.url, kubeconfigPath: server.kubeconfigPath, fillMs: Date.now() - start });
  process.on("message", (m: { count?: { path: string; query: string }; close?: boolean }) => {
    if (m.count)
      process.send!({
        count: server.requests.filter((r) => r.path === m.count!.path && r.query === m.count!.query).length,
      });
    if (m.close) void server.close().then(() => process.exit(0));
  });
}

interface HostProcess {
  child: ChildProcess;
  url: string;
  kubeconfigPath: string;
  fillMs: number;
  /** Requests the host received with exactly this path and query. */
  count(path: string, query: string): Promise<number>;
}

async function startHostProcess(): Promise<HostProcess> {
  const child = fork(fileURLToPath(import.meta.url), ["--bench-host"], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const hello = await new Promise<{ url: string; kubeconfigPath: string; fillMs: number }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; kubeconfigPath: string; fillMs: number }));
    child.once("exit", (code) => reject(new Error(`host exited with ${code}`)));
  });
  return {
    child,
    ...hello,
    count: (path, query) =>
      new Promise((resolve) => {
        child.once("message", (m) => resolve((m as { count: number }).count));
        child.send({ count: { path, query } });
      }),
  };
}

/** The proxy bundled into one ESM file (dependencies stay in node_modules): runs without the tsx loader thread. */
async function bundleProxy(): Promise<string> {
  const esbuild = await import("esbuild"); // tsx's own transpiler, installed with it
  const outfile = fileURLToPath(new URL("../node_modules/.cache/vc-metrics-proxy/main.mjs", import.meta.url));
  await esbuild.build({
    entryPoints: [fileURLToPath(new URL("../src/metrics-proxy/main.ts", import.meta.url))],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "error",
  });
  return outfile;
}

async function startProxyProcess(
  kubeconfig: string,
  entry = fileURLToPath(new URL("../bin/vc-metrics-proxy.js", import.meta.url)),
  nodeOptions?: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      entry,
      "--cluster",
      CLUSTER,
      "--host-namespace",
      HOST_NS,
      "--kubeconfig",
      kubeconfig,
      "--listen",
      "127.0.0.1:0",
      "--log-level",
      "info",
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: nodeOptions ? { ...process.env, NODE_OPTIONS: nodeOptions } : process.env,
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      buffer += chunk;
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buffer);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`proxy exited with ${code}: ${buffer}`)));
  });
  return { child, url };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One GET; resolves with its duration in ms. */
function timedGet(url: string): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.on("data", () => {});
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          else resolve(Number(process.hrtime.bigint() - start) / 1e6);
        });
      })
      .on("error", reject);
  });
}

/** Polls /readyz; returns the milliseconds until it answered 200. */
async function waitReady(url: string): Promise<number> {
  const start = Date.now();
  for (;;) {
    const ok = await new Promise<boolean>((resolve) =>
      http
        .get(`${url}/readyz`, { agent }, (r) => (r.resume(), resolve(r.statusCode === 200)))
        .on("error", () => resolve(false)),
    );
    if (ok) return Date.now() - start;
    if (Date.now() - start > 30_000) throw new Error("proxy not ready after 30 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Latencies of `n` sequential GETs, sorted. */
async function samples(url: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timedGet(url));
  return out.sort((a, b) => a - b);
}

/** One round: a block of proxy requests, then a block of the same request straight to the host. */
async function latency(proxyUrl: string, hostUrl: string, nProxy: number, nHost: number) {
  const p = await samples(proxyUrl, nProxy);
  const h = await samples(hostUrl, nHost);
  return { p50: percentile(p, 50), p99: percentile(p, 99), h50: percentile(h, 50), h99: percentile(h, 99) };
}

/** Requests per second with `concurrency` requests in flight for `ms`. */
async function throughput(url: string, concurrency: number, ms: number): Promise<number> {
  let done = 0;
  const end = Date.now() + ms;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await timedGet(url);
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - start) / 1e9);
}

function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

export async function run(ctx: BenchContext): Promise<void> {
  const host = await startHostProcess();
  let child: ChildProcess | undefined;
  try {
    ctx.report(
      "host fleet",
      `${PODS} pods (${OURS} in the virtual cluster), ${NODES} nodes`,
      "",
      `filled in ${host.fillMs} ms`,
    );
    const proxy = await startProxyProcess(host.kubeconfigPath);
    child = proxy.child;
    ctx.report("proxy ready (index of 200 pods synced)", await waitReady(proxy.url), "ms");

    const oneVirtual = `${G}/namespaces/ns-0/pods/pod-0`;
    const oneHost = `${G}/namespaces/${HOST_NS}/pods/${hostName("pod-0", "ns-0", CLUSTER)}`;
    const nsVirtual = `${G}/namespaces/ns-0/pods`;
    const nsHost = `${G}/namespaces/${HOST_NS}/pods?labelSelector=${encodeURIComponent(`${LABELS.managedBy}=${CLUSTER},vc.orch.io/namespace=ns-0`)}`;
    // The proxy's own host reads: LISTs of the host namespace's pod metrics (the bench's direct LISTs carry another selector).
    const proxyList = [
      `${G}/namespaces/${HOST_NS}/pods`,
      `labelSelector=${encodeURIComponent(`${LABELS.managedBy}=${CLUSTER}`)}`,
    ] as const;
    const listsBefore = await host.count(...proxyList);
    const measureStart = Date.now();

    type Round = { p50: number; p99: number; h50: number; h99: number };
    // The host answers a selected LIST of its 10,000 pod metrics in ~100-150 ms, so it gets fewer samples there.
    for (const [label, v, h, nHost] of [
      ["single pod", oneVirtual, oneHost, 1000],
      ["namespace list (50 pods)", nsVirtual, nsHost, 150],
    ] as const) {
      await latency(proxy.url + v, host.url + h, 200, nHost / 5); // warm-up
      const rounds: Round[] = [];
      for (let r = 0; r < 3; r++) rounds.push(await latency(proxy.url + v, host.url + h, 1000, nHost));
      const med = (f: (x: Round) => number) => rounds.map(f).sort((a, b) => a - b)[1]!;
      const p50 = med((x) => x.p50),
        p99 = med((x) => x.p99),
        h50 = med((x) => x.h50),
        h99 = med((x) => x.h99);
      ctx.report(`${label}: proxy p50 / p99`, `${p50.toFixed(3)} / ${p99.toFixed(3)}`, "ms");
      ctx.report(`${label}: host directly p50 / p99`, `${h50.toFixed(3)} / ${h99.toFixed(3)}`, "ms");
      ctx.report(
        `${label}: added latency p50 / p99`,
        `${(p50 - h50).toFixed(3)} / ${(p99 - h99).toFixed(3)}`,
        "ms",
        `proxy minus host, median of 3 rounds of 1000 proxy / ${nHost} host GETs; target < 1 / < 3 ms; negative: faster than the host`,
      );
    }
    for (const [label, v] of [
      ["single pod", oneVirtual],
      ["namespace list (50 pods)", nsVirtual],
      ["all pods (200)", `${G}/pods`],
    ] as const) {
      const rates: number[] = [];
      for (let r = 0; r < 3; r++) rates.push(await throughput(proxy.url + v, 16, 1000));
      ctx.report(
        `${label}: requests/s`,
        Math.round(rates.sort((a, b) => a - b)[1]!),
        "req/s",
        "16 in flight, proxy on one core, median of 3 s",
      );
    }
    const lists = (await host.count(...proxyList)) - listsBefore;
    ctx.report(
      "host pod-metrics LISTs by the proxy while measuring",
      lists,
      "",
      `${((Date.now() - measureStart) / 1000).toFixed(0)} s at cache TTL 15s, exact`,
    );
    const mem = rssMiB(child.pid!);
    ctx.report(
      "proxy resident memory, bin via tsx",
      mem.rss.toFixed(1),
      "MiB",
      `peak ${mem.peak.toFixed(1)} MiB after the load above; includes tsx's loader thread; target < 80 MiB`,
    );
    child.kill("SIGTERM");

    // The same code bundled (what the image ships), with the container's NODE_OPTIONS as rendered.
    const bundled = await startProxyProcess(host.kubeconfigPath, await bundleProxy(), METRICS_PROXY_NODE_OPTIONS);
    child = bundled.child;
    await waitReady(bundled.url);
    for (const v of [oneVirtual, nsVirtual, `${G}/pods`]) await throughput(bundled.url + v, 16, 1000);
    const bmem = rssMiB(child.pid!);
    ctx.report(
      "proxy resident memory, bundled JS",
      bmem.rss.toFixed(1),
      "MiB",
      `peak ${bmem.peak.toFixed(1)} MiB after 3 s of load; NODE_OPTIONS=${METRICS_PROXY_NODE_OPTIONS} as deployed; target < 80 MiB`,
    );
  } finally {
    child?.kill("SIGTERM");
    agent.destroy();
    host.child.send({ close: true });
  }
}

if (process.argv[2] === "--bench-host" && process.send) await hostMain();
