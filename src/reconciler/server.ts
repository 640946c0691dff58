// The reconciler's HTTP endpoints: /healthz, /readyz, /metrics and the GitHub webhook (POST /webhook).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { decideVerified, looksSigned, StreamedBody } from "./webhook.js";
import { DEFAULT_WEBHOOK_LIMITS, WebhookSlots, type Slot, type WebhookLimits } from "./webhook-slots.js";
import type { Logger } from "../model/log.js";
import type { UiHandler } from "../ui/server.js";

export const WEBHOOK_PATH = "/webhook";
/** Bytes of a webhook body kept in memory; longer bodies are only hashed (GitHub's push payloads are far smaller). */
export const WEBHOOK_KEEP_BYTES = 256 * 1024;
/** GitHub caps webhook payloads at 25 MB; anything longer is refused unread. */
const WEBHOOK_MAX_BYTES = 25 * 1024 * 1024;
/** Webhook requests being read at once (none is authenticated before its last byte); more get 503. */
export const WEBHOOK_MAX_PENDING = DEFAULT_WEBHOOK_LIMITS.maxPending;

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
  /**
   * Bounds of webhook reading (deadlines, minimum rate, slots per address); DEFAULT_WEBHOOK_LIMITS for those not given.
   */
  webhookLimits?: Partial<WebhookLimits>;
  /** The fleet page (its paths under /, /clusters, /rollout, /ui and /api/v1); absent: not served. */
  ui?: UiHandler;
  /** Clock of the slot table (tests). */
  now?: () => number;
}

/**
 * The address a sender's slots are counted under: an IPv4 address as is (also IPv4-mapped), an IPv6 address by its /64.
 */
export function sourceOf(remote: string | undefined): string {
  const addr = (remote ?? "unknown").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  if (!addr.includes(":")) return addr;
  const [head = "", tail = ""] = addr.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = addr.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** The webhook's slot table and how to cut short the request holding a slot. */
interface WebhookDoor {
  slots: WebhookSlots;
  abort: Map<Slot, (status: number, reason: string, headers?: Record<string, string>) => void>;
}

/**
 * A webhook request: refused before its body is read when it is not a POST, carries no well-formed signature or its
 * source may not take a slot (WebhookSlots: per-address cap, fair eviction); otherwise hashed as it streams, holding
 * at most WEBHOOK_KEEP_BYTES, cut short with 408 past its deadline or below the minimum rate, and decided once the
 * signature is checked. Never throws: any body gets an answer.
 */
function receiveWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  hooks: ServerHooks,
  text: (status: number, body: string) => void,
  door: WebhookDoor,
): void {
  const refuse = (status: number, reason: string, headers: Record<string, string> = {}): void => {
    if (!res.headersSent) {
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
      res.setHeader("Connection", "close");
      text(status, `${reason}\n`);
    }
    req.destroy();
    hooks.logger.info("webhook", { status, reason, delivery: req.headers["x-github-delivery"] });
  };
  if (req.method !== "POST") return refuse(405, "use POST");
  const header = req.headers["x-hub-signature-256"];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!hooks.webhookSecret || !looksSigned(signature)) return refuse(401, "signature missing or invalid");
  if (Number(req.headers["content-length"] ?? 0) > WEBHOOK_MAX_BYTES) return refuse(413, "body too large");
  const admission = door.slots.admit(sourceOf(req.socket.remoteAddress));
  if ("refused" in admission) {
    const why =
      admission.refused === "address"
        ? "too many webhook requests in flight from this address"
        : "too many webhook requests in flight";
    return refuse(503, why, { "Retry-After": "1" });
  }
  const slot = admission.admitted;
  if (admission.evicted)
    door.abort.get(admission.evicted)?.(
      503,
      "webhook slot given to another sender (too many requests in flight from this address)",
      { "Retry-After": "1" },
    );
  let done = false;
  const finish = () => {
    if (!done) {
      door.slots.release(slot);
      door.abort.delete(slot);
    }
    done = true;
  };
  door.abort.set(slot, (status, reason, headers) => {
    finish();
    refuse(status, reason, headers);
  });
  req.once("close", finish);
  const body = new StreamedBody(hooks.webhookSecret, WEBHOOK_KEEP_BYTES);
  req.on("data", (c: Buffer) => {
    if (done) return;
    body.update(c);
    slot.bytes = body.size;
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
  const limits: WebhookLimits = { ...DEFAULT_WEBHOOK_LIMITS, ...hooks.webhookLimits };
  const door: WebhookDoor = { slots: new WebhookSlots(limits, hooks.now), abort: new Map() };
  // Slow bodies are cut short by a sweep a few times per grace period; slow headers by Node's own check.
  const sweepMs = Math.max(5, Math.min(limits.rateGraceMs, limits.bodyTimeoutMs) / 4);
  const sweep = setInterval(() => {
    for (const { slot, reason } of door.slots.overdue()) door.abort.get(slot)?.(408, reason);
  }, sweepMs);
  sweep.unref();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
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
    if (path === WEBHOOK_PATH) return receiveWebhook(req, res, hooks, text, door);
    if (hooks.ui?.(req, res)) return;
    text(404, "not found\n");
  };
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      // A backstop for every endpoint; the webhook's own body deadline is the sweep's.
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs + 1000,
      connectionsCheckingInterval: Math.max(5, Math.min(1000, limits.headersTimeoutMs / 4)),
    },
    handle,
  );
  server.once("close", () => clearInterval(sweep));
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
        clearInterval(sweep);
        hooks.ui?.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
