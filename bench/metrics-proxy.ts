// Benchmark of the host's shared metrics proxy as deploy/metrics-proxy/deployment.yaml runs it (its flags and
// NODE_OPTIONS, bundled as the image ships it): resident memory at 1,000 clusters x 30 pods under load and at 1
// cluster, and the latency a cache miss for one pod adds to reading that pod's metrics from the host, interleaved with
// those direct host reads, one for one; with the Deployment's cache TTL and with --cache-ttl 0s; the Deployment's
// memory request and limit checked against the highest peak measured. Medians of --runs (default 3) proxy runs per
// fleet shape and TTL.
//
// The host is the Kubernetes API test server (the project's own host-metrics set-up) with every cluster's marked
// Namespace, kubeconfig Secret and pods, and beside it one HTTPS server playing every cluster's virtual API server
// (its front-proxy CA, SubjectAccessReviews, the metrics APIService). Host, proxy and the measuring client (each
// cluster's front proxy, with that cluster's client certificate) run in three processes.
//
//   npm run bench -- metrics-proxy [--clusters=1000] [--pods=30] [--runs=3] [--load-seconds=8]
import { execFile, fork, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dump, loadAll } from "js-yaml";
import { startKubeServer, type KubeServer } from "../test/support/kube-server/index.js";
import { selfSignedCertificate } from "../test/support/kube-server/tls.js";
import { ANNOTATIONS, LABELS, hostName } from "../src/translate/index.js";
import { mapLimit } from "../src/util/pool.js";
import { parseReplicaStatus, type ReplicaStatus } from "../src/model/proxy-status.js";
import type { BenchContext } from "./run.js";

const exec = promisify(execFile);
const G = "/apis/metrics.orch.io/v1beta1";
const NODES = 20;
const USER = { "X-Remote-User": "bench-user", "X-Remote-Group": "system:authenticated" };
const CACHE = fileURLToPath(new URL("../node_modules/.cache/vc-metrics-proxy-bench/", import.meta.url));
const DEPLOYMENT = fileURLToPath(new URL("../deploy/metrics-proxy/deployment.yaml", import.meta.url));

const clusterName = (i: number) => `c${String(i).padStart(4, "0")}`;
const namespaceOf = (i: number) => `vc-${clusterName(i)}`;
const VIRTUAL_NAMESPACES = ["default", "shop", "batch"];
const podOf = (p: number) => ({ namespace: VIRTUAL_NAMESPACES[p % VIRTUAL_NAMESPACES.length]!, name: `pod-${p}` });

interface Shape {
  clusters: number;
  pods: number;
}

// --- the host process -----------------------------------------------------------------------------------------------

/** Fills the host: per cluster its marked Namespace, its kubeconfig Secret, its pods and their metrics; nodes. */
function fillHost(server: KubeServer, shape: Shape, virtualUrl: string, virtualCa: string): void {
  for (let n = 0; n < NODES; n++) {
    server.put({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: `node-${n}` },
      status: { capacity: { cpu: "8", memory: "32Gi" } },
    } as never);
    server.setNodeMetrics(`node-${n}`, { cpu: `${100 + n}m`, memory: "2Gi" });
  }
  server.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "vc-metrics-proxy-status", namespace: "vc-system" },
  } as never);
  for (let i = 0; i < shape.clusters; i++) {
    const cluster = clusterName(i);
    const ns = namespaceOf(i);
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { [LABELS.managedBy]: cluster, [LABELS.metricsProxy]: "synced" } },
    } as never);
    const kubeconfig = dump({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "v",
          cluster: {
            server: `${virtualUrl}/vc/${cluster}`,
            "certificate-authority-data": Buffer.from(virtualCa).toString("base64"),
          },
        },
      ],
      users: [{ name: "admin", user: { token: "admin" } }],
      contexts: [{ name: "v", context: { cluster: "v", user: "admin" } }],
      "current-context": "v",
    });
    server.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `vc-${cluster}`, namespace: ns },
      data: { config: Buffer.from(kubeconfig).toString("base64") },
    } as never);
    for (let p = 0; p < shape.pods; p++) {
      const v = podOf(p);
      const name = hostName(v.name, v.namespace, cluster);
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name,
          namespace: ns,
          labels: { app: `app-${p % 5}`, [LABELS.managedBy]: cluster, "vc.orch.io/namespace": v.namespace },
          annotations: { [ANNOTATIONS.objectName]: v.name, [ANNOTATIONS.objectNamespace]: v.namespace },
        },
        spec: { nodeName: `node-${(i + p) % NODES}`, containers: [{ name: "main", image: "app" }] },
      } as never);
      server.setPodMetrics(ns, name, [{ name: "main", usage: { cpu: `${(i + p) % 900}m`, memory: `${p + 1}Mi` } }]);
    }
  }
}

/**
 * Every cluster's virtual API server at `/vc/<cluster>/...`: its front proxy's CA (extension-apiserver-authentication),
 * the metrics APIService (its caBundle kept), and SubjectAccessReviews, all allowed.
 */
function virtualServers(dir: string, caOf: (cluster: string) => string): https.Server {
  const cert = selfSignedCertificate(dir);
  const bundles = new Map<string, string>();
  return https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    const m = /^\/vc\/([^/]+)(\/[^?]*)/.exec(req.url ?? "");
    if (!m) return send(404, { kind: "Status", code: 404 });
    const [, cluster, path] = m as unknown as [string, string, string];
    let body = "";
    req.on("error", () => {}); // a client gave up (its timeout): nothing to answer
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (path === "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication")
        return send(200, {
          kind: "ConfigMap",
          data: {
            "requestheader-client-ca-file": caOf(cluster),
            "requestheader-allowed-names": '["front-proxy-client"]',
            "requestheader-username-headers": '["X-Remote-User"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
          },
        });
      if (path === "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.orch.io") {
        if (req.method === "PATCH") bundles.set(cluster, JSON.parse(body).spec.caBundle);
        return send(200, { kind: "APIService", spec: { caBundle: bundles.get(cluster) ?? "" } });
      }
      if (path === "/apis/authorization.k8s.io/v1/subjectaccessreviews")
        return send(201, { kind: "SubjectAccessReview", status: { allowed: true } });
      send(404, { kind: "Status", code: 404 });
    });
  });
}

/** Child entry: runs the host, reports its address, then waits to be closed. */
async function hostMain(shape: Shape, virtualUrl: string, virtualCaFile: string): Promise<void> {
  const server = await startKubeServer({ namespaces: ["default", "vc-system"] });
  const start = Date.now();
  fillHost(server, shape, virtualUrl, readFileSync(virtualCaFile, "utf8"));
  process.send!({ url: server.url, kubeconfigPath: server.kubeconfigPath, fillMs: Date.now() - start });
  process.on("message", (m: { close?: boolean }) => {
    if (m.close) void server.close().then(() => process.exit(0));
  });
  // Gone with the bench, however it ended.
  process.on("disconnect", () => process.exit(0));
}

/** Child entry: runs every cluster's virtual API server (a process of its own), reports its address and CA. */
async function virtualMain(clusters: number, pkiDir: string): Promise<void> {
  const dir = join(CACHE, "virtual");
  mkdirSync(dir, { recursive: true });
  const cas = new Map(
    Array.from({ length: clusters }, (_, i) => [
      clusterName(i),
      readFileSync(join(pkiDir, clusterName(i), "ca.crt"), "utf8"),
    ]),
  );
  const virtual = virtualServers(dir, (cluster) => cas.get(cluster) ?? "");
  await new Promise<void>((r) => virtual.listen(0, "127.0.0.1", r));
  process.send!({
    url: `https://127.0.0.1:${(virtual.address() as { port: number }).port}`,
    caFile: join(dir, "tls.crt"),
  });
  process.on("message", (m: { close?: boolean }) => {
    if (m.close) virtual.close(() => process.exit(0));
  });
  process.on("disconnect", () => process.exit(0));
}

/** Forks this file as one of its child roles and waits for its first message. */
async function child<T>(args: string[]): Promise<{ proc: ChildProcess; hello: T }> {
  const proc = fork(fileURLToPath(import.meta.url), args, {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const hello = await new Promise<T>((resolve, reject) => {
    proc.once("message", (m) => resolve(m as T));
    proc.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
  return { proc, hello };
}

// --- certificates ---------------------------------------------------------------------------------------------------

async function openssl(cwd: string, ...args: string[]): Promise<void> {
  await exec("openssl", args, { cwd });
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** True when the file exists and was made within the last 20 days (the certificates are valid for 30). */
function fresh(file: string): boolean {
  return existsSync(file) && Date.now() - statSync(file).mtimeMs < 20 * 24 * 3600 * 1000;
}

/**
 * Every cluster's front-proxy CA (all named `/CN=front-proxy-ca`, as the control planes name theirs) and the client
 * pair its front proxy presents; and the proxy's serving pair. Made once with openssl, kept in node_modules/.cache.
 */
async function makePki(clusters: number): Promise<string> {
  const dir = join(CACHE, "pki");
  const clusterDirs = Array.from({ length: clusters }, (_, i) => join(dir, clusterName(i)));
  await mapLimit(clusterDirs, 4, async (d) => {
    if (fresh(join(d, "client.crt"))) return;
    mkdirSync(d, { recursive: true });
    await openssl(
      d,
      "req",
      "-x509",
      ...EC,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "30",
      "-subj",
      "/CN=front-proxy-ca",
    );
    await openssl(d, "req", ...EC, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=front-proxy-client");
    writeFileSync(join(d, "client.ext"), "extendedKeyUsage=clientAuth\n");
    await openssl(
      d,
      "x509",
      "-req",
      "-in",
      "client.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "client.crt",
      "-days",
      "30",
      "-extfile",
      "client.ext",
    );
  });
  const serving = join(dir, "serving");
  if (!fresh(join(serving, "tls.crt"))) {
    mkdirSync(serving, { recursive: true });
    await openssl(
      serving,
      "req",
      "-x509",
      ...EC,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "30",
      "-subj",
      "/CN=proxy-ca",
    );
    await openssl(serving, "req", ...EC, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=vc-metrics-proxy");
    writeFileSync(
      join(serving, "tls.ext"),
      "subjectAltName=DNS:vc-metrics-proxy.kube-system.svc,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
    await openssl(
      serving,
      "x509",
      "-req",
      "-in",
      "tls.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "30",
      "-extfile",
      "tls.ext",
    );
  }
  return dir;
}

// --- the proxy process ----------------------------------------------------------------------------------------------

/** The container of deploy/metrics-proxy/deployment.yaml: its args, NODE_OPTIONS, and memory request and limit. */
function deployed(): { args: string[]; nodeOptions: string; request: string; limit: string } {
  const [deployment] = loadAll(readFileSync(DEPLOYMENT, "utf8")) as Array<{
    spec: { template: { spec: { containers: Array<Record<string, any>> } } };
  }>;
  const c = deployment!.spec.template.spec.containers[0]!;
  return {
    args: c.args as string[],
    nodeOptions: (c.env as Array<{ name: string; value?: string }>).find((e) => e.name === "NODE_OPTIONS")?.value ?? "",
    request: c.resources.requests.memory,
    limit: c.resources.limits.memory,
  };
}

/** The proxy bundled into one ESM file (dependencies stay in node_modules), as `npm run build` makes the image's. */
async function bundleProxy(): Promise<string> {
  const esbuild = await import("esbuild");
  const outfile = join(CACHE, "main.mjs");
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

/**
 * Starts the bundled proxy with the Deployment's args and NODE_OPTIONS; outside a cluster it is given the host's
 * kubeconfig, a loopback address, the bench's serving pair, the virtual API servers' addresses from each kubeconfig,
 * and `extra` (--cache-ttl 0s). Resolves once it listens.
 */
async function startProxyProcess(
  entry: string,
  kubeconfig: string,
  pki: string,
  extra: string[],
): Promise<{ child: ChildProcess; url: string }> {
  const d = deployed();
  const serving = join(pki, "serving");
  const args = [
    ...d.args,
    ...["--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0", "--virtual-server", "kubeconfig"],
    ...["--tls-cert", join(serving, "tls.crt"), "--tls-key", join(serving, "tls.key")],
    ...["--replica-name", "bench-0", "--log-level", "info"],
    ...extra,
  ];
  const profile = process.env.VC_BENCH_PROXY_PROFILE
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.VC_BENCH_PROXY_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, entry, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NODE_OPTIONS: d.nodeOptions },
  });
  const log = createWriteStream(join(CACHE, "proxy.log"));
  child.once("exit", () => log.end());
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      log.write(chunk);
      buffer = (buffer + chunk).slice(-20_000);
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buffer);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`proxy exited with ${code}: ${buffer}`)));
  });
  return { child, url };
}

// --- the measuring client -------------------------------------------------------------------------------------------

/** Longest wait for one answer: a request the proxy never finishes fails (counted) instead of stalling the bench. */
const ANSWER_TIMEOUT_MS = 30_000;

/** Fails `req` when no answer comes within ANSWER_TIMEOUT_MS, and when its answer is cut off. */
function bounded(req: http.ClientRequest, url: string, reject: (err: Error) => void): void {
  req.on("error", reject);
  req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`${url}: no answer within ${ANSWER_TIMEOUT_MS} ms`)));
  req.on("response", (res: http.IncomingMessage) => {
    res.on("error", reject);
    res.on("close", () => res.complete || reject(new Error(`${url}: answer cut off`)));
  });
}

/** One cluster's front proxy: its client certificate, on keep-alive connections of its own. */
class FrontProxy {
  private readonly agent: https.Agent;
  constructor(pki: string, cluster: string, ca: Buffer) {
    const d = join(pki, cluster);
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: 4,
      ca,
      cert: readFileSync(join(d, "client.crt")),
      key: readFileSync(join(d, "client.key")),
    });
  }
  /** One GET; resolves with its duration in ms (rejects unless 200). */
  get(url: string): Promise<number> {
    const start = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const req = https.get(url, { agent: this.agent, headers: USER }, (res) => {
        res.on("data", () => {});
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          else resolve(Number(process.hrtime.bigint() - start) / 1e6);
        });
      });
      bounded(req, url, reject);
    });
  }
  /** One GET's body. */
  text(url: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = https.get(url, { agent: this.agent, headers: USER }, (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${url}: ${res.statusCode}`))));
      });
      bounded(req, url, reject);
    });
  }
  close(): void {
    this.agent.destroy();
  }
}

const hostAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One GET straight to the host (as the admin); resolves with its duration in ms. */
function hostGet(url: string): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: hostAgent, headers: { Authorization: "Bearer admin" } }, (res) => {
      res.on("data", () => {});
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - start) / 1e6);
      });
    });
    bounded(req, url, reject);
  });
}

/** The replica's status in the host's ConfigMap (what it answers for), or undefined. */
async function statusOf(hostUrl: string): Promise<ReplicaStatus | undefined> {
  const url = `${hostUrl}/api/v1/namespaces/vc-system/configmaps/vc-metrics-proxy-status`;
  const body = await new Promise<string>((resolve, reject) => {
    const req = http.get(url, { agent: hostAgent, headers: { Authorization: "Bearer admin" } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve(text));
    });
    bounded(req, url, reject);
  });
  return parseReplicaStatus((JSON.parse(body) as { data?: Record<string, string> }).data?.["bench-0"]);
}

/** Waits until the proxy's status says it answers for every cluster; throws with why some are not. */
async function waitLoaded(hostUrl: string, clusters: number): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const status = await statusOf(hostUrl);
    if (status && status.loaded === clusters && Object.keys(status.failed).length === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the proxy answers for ${status?.loaded ?? 0} of ${clusters} clusters: ${JSON.stringify(status?.failed)}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Polls /readyz; returns the milliseconds until it answered 200. */
async function waitReady(url: string, ca: Buffer): Promise<number> {
  const start = Date.now();
  for (;;) {
    const ok = await new Promise<boolean>((resolve) =>
      https
        .get(`${url}/readyz`, { ca, agent: false }, (r) => (r.resume(), resolve(r.statusCode === 200)))
        .on("error", () => resolve(false)),
    );
    if (ok) return Date.now() - start;
    if (Date.now() - start > 600_000) throw new Error("proxy not ready after 10 minutes");
    await new Promise((r) => setTimeout(r, 100));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** CPU time (user + system) the process has used so far, in ms. */
function cpuMs(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat, after the command name in parentheses; in clock ticks (100 per second).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
    .replace(/^.*\) /s, "")
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The proxy's heap in use and external memory in MiB, read from its /metrics (Node.js process metrics). */
async function heapOf(proxyUrl: string, front: FrontProxy): Promise<{ used: number; external: number }> {
  const text = await front.text(`${proxyUrl}/metrics`);
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)$`, "m").exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { used: value("nodejs_heap_size_used_bytes"), external: value("nodejs_external_memory_bytes") };
}

/** A pseudo-random stream (the same each run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * Load from every cluster's front proxy: first each cluster asks once (its connection opened, as every virtual API
 * server keeps one), then for `ms`, `concurrency` requests in flight: one pod (60 %), a namespace's pods (30 %), all
 * the cluster's pods (10 %), each of a random cluster. Samples the proxy's RSS meanwhile; returns the largest sample,
 * the requests answered in the timed part and the CPU time the proxy used for them.
 */
async function load(
  proxyUrl: string,
  fronts: FrontProxy[],
  shape: Shape,
  pid: number,
  ms: number,
  concurrency: number,
): Promise<{ rss: number; requests: number; failed: number; cpuMs: number }> {
  const next = random(7);
  let rss = 0;
  let requests = 0;
  let failed = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssMiB(pid).rss)), 100);
  await mapLimit(fronts, concurrency, (front) =>
    front.get(`${proxyUrl}${G}/namespaces/default/pods`).catch(() => void failed++),
  );
  const end = Date.now() + ms;
  const cpuStart = cpuMs(pid);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const c = Math.floor(next() * shape.clusters);
        const r = next();
        const pod = podOf(Math.floor(next() * shape.pods));
        const path =
          r < 0.6
            ? `${G}/namespaces/${pod.namespace}/pods/${pod.name}`
            : r < 0.9
              ? `${G}/namespaces/${pod.namespace}/pods`
              : `${G}/pods`;
        try {
          await fronts[c]!.get(proxyUrl + path);
          requests++;
        } catch {
          failed++;
        }
      }
    }),
  );
  clearInterval(sampler);
  return { rss: Math.max(rss, rssMiB(pid).rss), requests, failed, cpuMs: cpuMs(pid) - cpuStart };
}

/**
 * The latency of one pod's metrics through the proxy against the same pod straight from the host, in interleaved
 * blocks (proxy, host, three times), one request at a time, over `pods` pods of a few clusters (their connections and
 * authorization decisions made before each block: what is measured is the metrics path). Medians of the blocks.
 */
async function latency(
  proxyUrl: string,
  hostUrl: string,
  fronts: FrontProxy[],
  shape: Shape,
  perBlock: number,
): Promise<{ p50: number; p99: number; h50: number; h99: number }> {
  const next = random(11);
  const picks = Array.from({ length: 50 }, () => {
    const c = Math.floor(next() * Math.min(shape.clusters, 10));
    const p = podOf(Math.floor(next() * shape.pods));
    return {
      front: fronts[c]!,
      proxy: `${proxyUrl}${G}/namespaces/${p.namespace}/pods/${p.name}`,
      host: `${hostUrl}${G}/namespaces/${namespaceOf(c)}/pods/${hostName(p.name, p.namespace, clusterName(c))}`,
    };
  });
  const rounds: Array<{ p50: number; p99: number; h50: number; h99: number }> = [];
  for (let round = 0; round < 3; round++) {
    for (const pick of picks) await pick.front.get(pick.proxy); // connections and authorization decisions warm
    // One read through the proxy, then the same pod's read on the host: both see the machine as it is at that moment.
    const p: number[] = [];
    const h: number[] = [];
    for (let i = 0; i < perBlock; i++) {
      const pick = picks[i % picks.length]!;
      p.push(await pick.front.get(pick.proxy));
      h.push(await hostGet(pick.host));
    }
    p.sort((a, b) => a - b);
    h.sort((a, b) => a - b);
    rounds.push({ p50: percentile(p, 50), p99: percentile(p, 99), h50: percentile(h, 50), h99: percentile(h, 99) });
  }
  return {
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    h50: median(rounds.map((r) => r.h50)),
    h99: median(rounds.map((r) => r.h99)),
  };
}

// --- the suite ------------------------------------------------------------------------------------------------------

interface ProxyRun {
  readyMs: number;
  idle: number;
  underLoad: number;
  peak: number;
  requests: number;
  /** CPU time the proxy used from its start until every cluster was loaded, ms. */
  startCpuMs: number;
  /** CPU time the proxy used under load, ms. */
  loadCpuMs: number;
  /** Answers other than 200 under load (an undecided authorization is a 503). */
  failed: number;
  latency: { p50: number; p99: number; h50: number; h99: number };
  /** V8's heap in use and the memory of its external objects (TLS, buffers), from the proxy's own /metrics. */
  heap: { used: number; external: number };
}

function flag(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
}

/** A quantity of memory (`512Mi`, `1Gi`) in MiB. */
function mib(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`not a memory quantity in MiB or GiB: ${q}`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
}

async function measureShape(ctx: BenchContext, shape: Shape, entry: string, runs: number, loadMs: number) {
  const pki = await makePki(shape.clusters);
  const ca = readFileSync(join(pki, "serving", "ca.crt"));
  const virtual = await child<{ url: string; caFile: string }>(["--bench-virtual", String(shape.clusters), pki]);
  const { proc: host, hello } = await child<{ url: string; kubeconfigPath: string; fillMs: number }>([
    ...["--bench-host", String(shape.clusters), String(shape.pods)],
    ...[virtual.hello.url, virtual.hello.caFile],
  ]);
  const label = `${shape.clusters} cluster${shape.clusters === 1 ? "" : "s"} x ${shape.pods} pods`;
  ctx.report(`${label}: host filled`, hello.fillMs, "ms", `${shape.clusters * shape.pods} pods, ${NODES} nodes`);
  const fronts = Array.from({ length: shape.clusters }, (_, i) => new FrontProxy(pki, clusterName(i), ca));
  const results: Record<string, ProxyRun[]> = {};
  try {
    for (let r = 0; r < runs; r++) {
      for (const ttl of ["deployed", "0s"]) {
        const proxy = await startProxyProcess(
          entry,
          hello.kubeconfigPath,
          pki,
          ttl === "0s" ? ["--cache-ttl", "0s"] : [],
        );
        try {
          const readyMs = await waitReady(proxy.url, ca);
          await waitLoaded(hello.url, shape.clusters);
          const startCpuMs = cpuMs(proxy.child.pid!);
          const idle = rssMiB(proxy.child.pid!).rss;
          const loaded = await load(proxy.url, fronts, shape, proxy.child.pid!, loadMs, 32);
          const lat = await latency(proxy.url, hello.url, fronts, shape, 500);
          const { peak } = rssMiB(proxy.child.pid!);
          const heap = await heapOf(proxy.url, fronts[0]!);
          (results[ttl] ??= []).push({
            readyMs,
            idle,
            underLoad: loaded.rss,
            peak,
            requests: loaded.requests,
            startCpuMs,
            loadCpuMs: loaded.cpuMs,
            failed: loaded.failed,
            latency: lat,
            heap,
          });
        } finally {
          proxy.child.kill("SIGTERM");
        }
      }
    }
  } finally {
    for (const f of fronts) f.close();
    host.send({ close: true });
    virtual.proc.send({ close: true });
  }
  const d = deployed();
  for (const [ttl, list] of Object.entries(results)) {
    const what = `${label}, cache TTL ${ttl === "0s" ? "0s" : d.args[d.args.indexOf("--cache-ttl") + 1]}`;
    const m = (f: (x: ProxyRun) => number) => median(list.map(f));
    ctx.report(
      `${what}: ready after`,
      m((x) => x.readyMs),
      "ms",
      `every cluster loaded; median of ${list.length}`,
    );
    ctx.report(
      `${what}: RSS idle / under load`,
      `${m((x) => x.idle).toFixed(1)} / ${m((x) => x.underLoad).toFixed(1)}`,
      "MiB",
      `load: ${loadMs / 1000} s, 32 in flight, ${Math.round(m((x) => x.requests) / (loadMs / 1000))} req/s, ` +
        `${m((x) => x.failed)} not 200; medians of ${list.length}`,
    );
    ctx.report(
      `${what}: CPU to load every cluster / per 1,000 requests under load`,
      `${m((x) => x.startCpuMs).toFixed(0)} / ${m((x) => (x.loadCpuMs / x.requests) * 1000).toFixed(0)}`,
      "ms",
      `user + system; under load the proxy used ${m((x) => x.loadCpuMs / loadMs).toFixed(2)} cores; medians`,
    );
    ctx.report(
      `${what}: RSS peak`,
      Math.max(...list.map((x) => x.peak)).toFixed(1),
      "MiB",
      `largest VmHWM of ${list.length} runs`,
    );
    ctx.report(
      `${what}: V8 heap used / external after load`,
      `${m((x) => x.heap.used).toFixed(1)} / ${m((x) => x.heap.external).toFixed(1)}`,
      "MiB",
      "the rest of the RSS is Node's own and native (TLS, sockets)",
    );
    ctx.report(
      `${what}: one pod, proxy p50 / p99`,
      `${m((x) => x.latency.p50).toFixed(3)} / ${m((x) => x.latency.p99).toFixed(3)}`,
      "ms",
    );
    ctx.report(
      `${what}: one pod, host directly p50 / p99`,
      `${m((x) => x.latency.h50).toFixed(3)} / ${m((x) => x.latency.h99).toFixed(3)}`,
      "ms",
    );
    ctx.report(
      `${what}: one pod, added latency p50 / p99`,
      `${m((x) => x.latency.p50 - x.latency.h50).toFixed(3)} / ${m((x) => x.latency.p99 - x.latency.h99).toFixed(3)}`,
      "ms",
      ttl === "0s" ? "every request a cache miss; target <= 1 / 3 ms" : "hits and misses as they come",
    );
  }
  const all = Object.values(results).flat();
  return { peak: Math.max(...all.map((x) => x.peak)), underLoad: median(all.map((x) => x.underLoad)) };
}

export async function run(ctx: BenchContext): Promise<void> {
  const runs = flag("runs", 3);
  const loadMs = flag("load-seconds", 8) * 1000;
  const shapes: Shape[] = [
    { clusters: flag("clusters", 1000), pods: flag("pods", 30) },
    { clusters: 1, pods: flag("pods", 30) },
  ];
  const d = deployed();
  ctx.report("as deployed", `${d.args.join(" ")}`, "", `NODE_OPTIONS=${d.nodeOptions}; bundled as the image runs it`);
  const entry = await bundleProxy();
  const figures = [];
  for (const shape of shapes) figures.push(await measureShape(ctx, shape, entry, runs, loadMs));
  const [fleet, one] = figures as [Awaited<ReturnType<typeof measureShape>>, Awaited<ReturnType<typeof measureShape>>];
  ctx.report(
    "memory: RSS under load at the fleet / at 1 cluster",
    `${fleet.underLoad.toFixed(1)} / ${one.underLoad.toFixed(1)}`,
    "MiB",
    "targets <= 512 / <= 80 MiB",
  );
  // A proxy per cluster is a process of its own serving one cluster: at least the 1-cluster figure, N times over.
  const n = shapes[0]!.clusters;
  ctx.report(
    `memory: one shared proxy for ${n} clusters / ${n} proxies of one cluster each`,
    `${fleet.underLoad.toFixed(0)} / ${(n * one.underLoad).toFixed(0)}`,
    "MiB",
    `RSS under load; the second is ${n} x the 1-cluster figure, a lower bound`,
  );
  // Sizing: the request covers the highest peak measured (either cache TTL), the limit a quarter more.
  const peak = Math.max(fleet.peak, one.peak);
  const request = Math.ceil(peak / 16) * 16;
  const limit = Math.ceil((peak * 1.25) / 16) * 16;
  const ok = mib(d.request) >= request && mib(d.limit) >= limit;
  ctx.report(
    "Deployment memory request / limit",
    `${d.request} / ${d.limit}`,
    "",
    `derived: request >= ${request}Mi (the peak, ${peak.toFixed(1)} MiB), limit >= ${limit}Mi (1.25 x the peak); ` +
      (ok ? "met" : "NOT MET: raise them in deploy/metrics-proxy/deployment.yaml"),
  );
}

if (process.argv[2] === "--bench-host" && process.send)
  await hostMain(
    { clusters: Number(process.argv[3]), pods: Number(process.argv[4]) },
    process.argv[5]!,
    process.argv[6]!,
  );
if (process.argv[2] === "--bench-virtual" && process.send) await virtualMain(Number(process.argv[3]), process.argv[4]!);
