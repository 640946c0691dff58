// The reconciler's HTTP endpoints: /healthz, /readyz, /metrics and the GitHub webhook (POST /webhook).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { decideVerified, looksSigned, StreamedBody } from "./webhook.js";
import type { Logger } from "../log.js";

export const WEBHOOK_PATH = "/webhook";
/** Bytes of a webhook body kept in memory; longer bodies are only hashed (GitHub's push payloads are far smaller). */
export const WEBHOOK_KEEP_BYTES = 256 * 1024;
/** GitHub caps webhook payloads at 25 MB; anything longer is refused unread. */
const WEBHOOK_MAX_BYTES = 25 * 1024 * 1024;
/** Webhook requests being read at once (none is authenticated before its last byte); more get 503. */
export const WEBHOOK_MAX_PENDING = 16;

export interface ServerHooks {
  registry: Registry;
  /** Ready: the first reconciliation finished (and, when elected, this replica is a candidate). */
  ready(): boolean;
  /** Live: the loop is not stuck. */
  healthy(): boolean;
  /** Secret for X-Hub-Signature-256; without one every webhook request is refused. */
  webhookSecret?: string;
  /** The branch or tag followed; pushes to other refs are ignored. */
  ref: string;
  /** Called for a verified push to the followed ref. */
  onPush(commit: string | undefined): void;
  logger: Logger;
}

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/**
 * A webhook request: refused before its body is read when it is not a POST, carries no well-formed signature or
 * too many are being read; otherwise hashed as it streams, holding at most WEBHOOK_KEEP_BYTES, and decided once the
 * signature is checked. Never throws: any body gets an answer.
 */
function receiveWebhook(req: IncomingMessage, res: ServerResponse, hooks: ServerHooks, text: (status: number, body: string) => void, inFlight: { n: number }): void {
  const refuse = (status: number, reason: string, headers: Record<string, string> = {}): void => {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.setHeader("Connection", "close");
    text(status, `${reason}\n`);
    req.destroy();
    hooks.logger.info("webhook", { status, reason, delivery: req.headers["x-github-delivery"] });
  };
  if (req.method !== "POST") return refuse(405, "use POST");
  const header = req.headers["x-hub-signature-256"];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!hooks.webhookSecret || !looksSigned(signature)) return refuse(401, "signature missing or invalid");
  if (Number(req.headers["content-length"] ?? 0) > WEBHOOK_MAX_BYTES) return refuse(413, "body too large");
  if (inFlight.n >= WEBHOOK_MAX_PENDING) return refuse(503, "too many webhook requests in flight", { "Retry-After": "1" });
  inFlight.n++;
  let done = false;
  const finish = () => {
    if (!done) inFlight.n--;
    done = true;
  };
  req.once("close", finish);
  const body = new StreamedBody(hooks.webhookSecret, WEBHOOK_KEEP_BYTES);
  req.on("data", (c: Buffer) => {
    if (done) return;
    body.update(c);
    if (body.size > WEBHOOK_MAX_BYTES) {
      finish();
      refuse(413, "body too large");
    }
  });
  req.on("end", () => {
    if (done) return;
    finish();
    let d: ReturnType<typeof decideVerified>;
    try {
      d = decideVerified(req.headers, body.verify(signature), body.body, hooks.ref);
    } catch (err) {
      d = { status: 400, trigger: false, reason: `cannot read the payload: ${(err as Error).message}` };
    }
    hooks.logger.info("webhook", { status: d.status, reason: d.reason, delivery: req.headers["x-github-delivery"] });
    if (d.trigger) hooks.onPush(d.commit);
    text(d.status, `${d.reason}\n`);
  });
}

/** Parses `--listen`: `:8080`, `8080`, `127.0.0.1:8080`. */
export function parseListen(addr: string): { host: string; port: number } {
  const m = /^(?:(.*):)?(\d+)$/.exec(addr.trim());
  if (!m) throw new Error(`invalid listen address "${addr}": use [HOST]:PORT, e.g. :8080`);
  const host = m[1] ? m[1].replace(/^\[|\]$/g, "") : "0.0.0.0";
  return { host, port: Number(m[2]) };
}

export async function startServer(listen: string, hooks: ServerHooks): Promise<RunningServer> {
  const { host, port } = parseListen(listen);
  const inFlight = { n: 0 };
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const text = (status: number, body: string, type = "text/plain; charset=utf-8"): void => {
      res.writeHead(status, { "Content-Type": type });
      res.end(body);
    };
    if (path === "/healthz") return text(hooks.healthy() ? 200 : 503, hooks.healthy() ? "ok\n" : "loop stalled\n");
    if (path === "/readyz") return text(hooks.ready() ? 200 : 503, hooks.ready() ? "ok\n" : "not ready\n");
    if (path === "/metrics") {
      hooks.registry.metrics().then(
        (body) => text(200, body, hooks.registry.contentType),
        () => text(500, "metrics unavailable\n"),
      );
      return;
    }
    if (path === WEBHOOK_PATH) return receiveWebhook(req, res, hooks, text, inFlight);
    text(404, "not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const shownHost = a.address.includes(":") ? `[${a.address}]` : a.address;
  return {
    server,
    url: `http://${shownHost === "0.0.0.0" ? "127.0.0.1" : shownHost}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
