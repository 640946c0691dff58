// The reconciler's webhook under 60 held 5 MiB bodies: resident memory before and during, for unsigned bodies and for
// bodies with a well-formed (but wrong) signature, the two ways a stranger can hold requests open; and the latency of
// a genuine signed push while 100 connections dribble wrongly signed bodies (from one address, and from ten).
import { request, type ClientRequest } from "node:http";
import type { BenchContext } from "./run.js";
import { sign } from "../src/reconciler/webhook.js";
import { createMetrics } from "../src/reconciler/metrics.js";
import { startServer, WEBHOOK_PATH } from "../src/reconciler/server.js";
import { silentLogger } from "../src/model/log.js";

const HELD = 60;
const BODY = 5 * 1024 * 1024;

function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}

/** The sender runs in its own process, so that only the server's memory is measured here. */
const SENDER = `
const { request } = require("node:http");
const [url, header, held, size] = process.argv.slice(1);
const chunk = Buffer.alloc(64 * 1024, 120);
const statuses = {};
for (let i = 0; i < Number(held); i++) {
  const headers = { "Content-Length": String(Number(size) + 1) };
  if (header) headers["X-Hub-Signature-256"] = header;
  const req = request(url, { method: "POST", headers }, (res) => { statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1; res.resume(); });
  req.on("error", () => {});
  // The whole body but its last byte: a server that buffers until the end holds all of it.
  for (let sent = 0; sent < Number(size); sent += chunk.length) req.write(chunk);
}
setTimeout(() => { process.stdout.write(JSON.stringify(statuses)); process.exit(0); }, 4000);
`;

async function hold(url: string, header: string): Promise<{ statuses: string; peakRss: number }> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, ["-e", SENDER, `${url}${WEBHOOK_PATH}`, header, String(HELD), String(BODY)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  let peakRss = 0;
  const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  await new Promise((r) => child.once("exit", r));
  clearInterval(timer);
  return { statuses: out, peakRss };
}

export async function run(ctx: BenchContext): Promise<void> {
  const srv = await startServer("127.0.0.1:0", {
    registry: createMetrics({ defaults: false }).registry,
    ready: () => true,
    healthy: () => true,
    webhookSecret: "s3cret",
    ref: "main",
    onPush: () => {},
    logger: silentLogger,
  });
  try {
    const base = process.memoryUsage().rss;
    ctx.report("resident memory before", mib(base), "MiB");
    for (const [what, header] of [
      ["unsigned", ""],
      ["well-formed wrong signature", `sha256=${"0".repeat(64)}`],
    ] as const) {
      const held = await hold(srv.url, header);
      ctx.report(
        `${HELD} held 5 MiB bodies, ${what}: peak resident memory`,
        mib(held.peakRss),
        "MiB",
        `${mib(held.peakRss - base).toFixed(1)} MiB over the start; answers ${held.statuses}`,
      );
    }
  } finally {
    await srv.close();
  }
  await pushLatency(ctx);
}

const SLOW = 100;
const PUSHES = 30;

/** One genuine signed push from 127.0.0.2: its status and milliseconds to the answer. */
function push(url: string, n: number): Promise<{ status: number; ms: number }> {
  const body = JSON.stringify({ ref: "refs/heads/main", after: `c${n}` });
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${WEBHOOK_PATH}`,
      {
        method: "POST",
        agent: false,
        localAddress: "127.0.0.2",
        headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("s3cret", body) },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - start) / 1e6 }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Genuine pushes one after another (median latency, refusals) while `addresses` hold SLOW dribbling connections. */
async function pushesUnderFlood(addresses: number): Promise<{ median: number; refused: number; held: number }> {
  const srv = await startServer("127.0.0.1:0", {
    registry: createMetrics({ defaults: false }).registry,
    ready: () => true,
    healthy: () => true,
    webhookSecret: "s3cret",
    ref: "main",
    onPush: () => {},
    logger: silentLogger,
  });
  const slow: ClientRequest[] = [];
  let answered = 0;
  try {
    for (let i = 0; i < (addresses ? SLOW : 0); i++) {
      const req = request(`${srv.url}${WEBHOOK_PATH}`, {
        method: "POST",
        agent: false,
        localAddress: `127.0.1.${(i % addresses) + 1}`,
        headers: { "X-Hub-Signature-256": `sha256=${"0".repeat(64)}`, "Content-Length": "100000" },
      });
      req.on("response", (res) => (res.resume(), answered++));
      req.on("error", () => {});
      req.write("x");
      slow.push(req);
    }
    // Let the flood's headers arrive first (the answers to those refused), then push.
    await new Promise((r) => setTimeout(r, 300));
    const held = slow.length - answered;
    const times: number[] = [];
    let refused = 0;
    for (let n = 0; n < PUSHES; n++) {
      const r = await push(srv.url, n);
      if (r.status !== 202) refused++;
      times.push(r.ms);
    }
    times.sort((a, b) => a - b);
    return { median: times[Math.floor(times.length / 2)]!, refused, held };
  } finally {
    for (const r of slow) r.destroy();
    await srv.close();
  }
}

async function pushLatency(ctx: BenchContext): Promise<void> {
  await pushesUnderFlood(0); // warm-up: the first run pays for compiling the paths
  const quiet = await pushesUnderFlood(0);
  ctx.report("genuine push latency, no flood", quiet.median, "ms", `median of ${PUSHES}; refused ${quiet.refused}`);
  for (const addresses of [1, 10]) {
    const flood = await pushesUnderFlood(addresses);
    ctx.report(
      `genuine push latency, ${SLOW} slow connections from ${addresses} address(es)`,
      flood.median,
      "ms",
      `median of ${PUSHES}; ${(flood.median / quiet.median).toFixed(2)}x the quiet one; ${flood.held} slow bodies ` +
        `held by the server at the start, genuine pushes refused ${flood.refused}`,
    );
  }
}
