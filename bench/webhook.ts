// The reconciler's webhook under 60 held 5 MiB bodies: resident memory before and during, for unsigned bodies and for
// bodies with a well-formed (but wrong) signature, the two ways a stranger can hold requests open.
import type { BenchContext } from "./run.js";
import { createMetrics } from "../src/reconciler/metrics.js";
import { startServer, WEBHOOK_PATH } from "../src/reconciler/server.js";
import { silentLogger } from "../src/log.js";

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
  const child = spawn(process.execPath, ["-e", SENDER, `${url}${WEBHOOK_PATH}`, header, String(HELD), String(BODY)], { stdio: ["ignore", "pipe", "inherit"] });
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
      ctx.report(`${HELD} held 5 MiB bodies, ${what}: peak resident memory`, mib(held.peakRss), "MiB", `${mib(held.peakRss - base).toFixed(1)} MiB over the start; answers ${held.statuses}`);
    }
  } finally {
    await srv.close();
  }
}
