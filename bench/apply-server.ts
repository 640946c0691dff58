// The API test server in a process of its own for bench/apply.ts, as a real API server is: JSON lines on stdin/stdout.
// Prints {"url","kubeconfigPath"} once started; then answers {"op":"count","filter":{...}} | {"op":"reset"} |
// {"op":"close"}.
import { createInterface } from "node:readline";
import { startKubeServer } from "../test/support/kube-server/index.js";

const server = await startKubeServer();
process.stdout.write(`${JSON.stringify({ url: server.url, kubeconfigPath: server.kubeconfigPath })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const msg = JSON.parse(line) as { op: string; filter?: Record<string, string> };
  if (msg.op === "count")
    process.stdout.write(`${JSON.stringify({ count: server.countRequests(msg.filter ?? {}) })}\n`);
  else if (msg.op === "reset") {
    server.resetRequests();
    process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
  } else if (msg.op === "close") break;
}
await server.close();
process.exit(0);
