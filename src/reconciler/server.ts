// The reconciler's HTTP endpoints: /healthz, /readyz, /metrics and the GitHub webhook (POST /webhook).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { decideWebhook } from "./webhook.js";
import type { Logger } from "../log.js";

export const WEBHOOK_PATH = "/webhook";
const MAX_BODY = 5 * 1024 * 1024;

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

/** Parses `--listen`: `:8080`, `8080`, `127.0.0.1:8080`. */
export function parseListen(addr: string): { host: string; port: number } {
  const m = /^(?:(.*):)?(\d+)$/.exec(addr.trim());
  if (!m) throw new Error(`invalid listen address "${addr}": use [HOST]:PORT, e.g. :8080`);
  const host = m[1] ? m[1].replace(/^\[|\]$/g, "") : "0.0.0.0";
  return { host, port: Number(m[2]) };
}

export async function startServer(listen: string, hooks: ServerHooks): Promise<RunningServer> {
  const { host, port } = parseListen(listen);
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
    if (path === WEBHOOK_PATH) {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          text(413, "body too large\n");
          req.destroy();
        } else chunks.push(c);
      });
      req.on("end", () => {
        if (size > MAX_BODY) return;
        const d = decideWebhook({ method: req.method ?? "GET", headers: req.headers, body: Buffer.concat(chunks) }, hooks.webhookSecret, hooks.ref);
        hooks.logger.info("webhook", { status: d.status, reason: d.reason, delivery: req.headers["x-github-delivery"] });
        if (d.trigger) hooks.onPush(d.commit);
        text(d.status, `${d.reason}\n`);
      });
      return;
    }
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
