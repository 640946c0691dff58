// The fleet page's HTTP side: the page and its assets, the read-only JSON API and its event stream (GET and HEAD only).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { jsonEscapeControls } from "../model/escape.js";
import { maskCredentialsDeep } from "../model/secrets.js";
import { loadAssets, type Assets } from "./assets.js";
import { parseQuery, QueryError, queryRows, type ClusterPage, type FleetEvent, type FleetProvider } from "./model.js";
import type { ListRow } from "../ops/list.js";

/** The page's policy: its own scripts, styles and API only; nothing inline, no frame, no form, no third party. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** How a request to the API was decided: allowed, or refused with a status and a message for the page. */
export type Decision = { allowed: true } | { allowed: false; status: 401 | 403 | 503; message: string };

export interface UiOptions {
  provider: FleetProvider;
  /** Decides each API request (the reconciler's TokenReview and SubjectAccessReview); absent: all are allowed. */
  authorize?: (req: IncomingMessage) => Promise<Decision>;
  /** The built page (dist/ui); default: the package's. */
  assets?: Assets;
  /** Event streams open at once; more get 503 (default 100). */
  maxStreams?: number;
  /** Events kept for a stream that reconnects (default 2,000); one further back starts over. */
  replay?: number;
  /** Bytes a stream may have waiting for a slow reader before it is closed (it reconnects and catches up). */
  maxBuffered?: number;
  /** Milliseconds between keep-alive comments on an event stream (default 15 s). */
  heartbeatMs?: number;
}

/** The paths of the page itself: the fleet, a cluster (deep link), the rollout. */
const PAGE_PATHS = /^\/(?:clusters(?:\/[^/]+)?|rollout)?$/;

/** A handler of the fleet page's paths: returns false for a path that is not the page's (the caller answers it). */
export type UiHandler = ((req: IncomingMessage, res: ServerResponse) => boolean) & { close(): void };

/** Whether a path belongs to the fleet page (the page, its assets, the API). */
function isUiPath(path: string): boolean {
  return PAGE_PATHS.test(path) || path.startsWith("/ui/") || path === "/api/v1" || path.startsWith("/api/v1/");
}

/** The JSON of an answer: every credential masked (the one masker), control characters escaped. */
function jsonBody(data: unknown, masked = false): string {
  return jsonEscapeControls(JSON.stringify(masked ? data : maskCredentialsDeep(data ?? null)));
}

/** Each row as the masker leaves it, kept while the row is (a provider replaces a row that changes). */
const maskedRows = new WeakMap<ListRow, unknown>();

function maskedRow(row: ListRow): unknown {
  let m = maskedRows.get(row);
  if (m === undefined) {
    m = maskCredentialsDeep(row);
    maskedRows.set(row, m);
  }
  return m;
}

/** An event's data: a row through the per-row cache, anything else through the masker. */
const eventBody = (e: FleetEvent): string =>
  e.type === "cluster" ? jsonBody({ type: e.type, row: maskedRow(e.row) }, true) : jsonBody(e);

/** A page of rows masked: its rows through the per-row cache, the rest of it through the masker. */
function maskedPage(page: ClusterPage): unknown {
  return { ...(maskCredentialsDeep({ ...page, items: [] }) as object), items: page.items.map(maskedRow) };
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const gzip = bytes.length > 1024 && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const out = gzip ? gzipSync(bytes) : bytes;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": String(out.length),
    Vary: "Accept-Encoding",
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    ...extra,
  });
  res.end(req.method === "HEAD" ? undefined : out);
}

const sendJson = (req: IncomingMessage, res: ServerResponse, status: number, data: unknown, masked = false): void =>
  send(req, res, status, "application/json; charset=utf-8", jsonBody(data, masked), { "Cache-Control": "no-store" });

interface Stream {
  res: ServerResponse;
}

/** The handler of the page's paths over a fleet provider. */
export function uiHandler(opts: UiOptions): UiHandler {
  const assets = opts.assets ?? loadAssets();
  const maxStreams = opts.maxStreams ?? 100;
  const replay = opts.replay ?? 2000;
  const maxBuffered = opts.maxBuffered ?? 1024 * 1024;
  const streams = new Set<Stream>();
  // The last events, numbered, for streams that come back with Last-Event-ID.
  const recent: Array<{ id: number; text: string }> = [];
  let nextId = 1;
  const frame = (id: number, e: FleetEvent): string => `id: ${id}\nevent: ${e.type}\ndata: ${eventBody(e)}\n\n`;
  const unsubscribe = opts.provider.subscribe((e) => {
    const id = nextId++;
    const text = frame(id, e);
    recent.push({ id, text });
    if (recent.length > replay) recent.splice(0, recent.length - replay);
    for (const s of streams) write(s, text);
  });
  const write = (s: Stream, text: string): void => {
    // A reader that keeps up holds little; one that does not is closed, and catches up when it reconnects.
    if (s.res.writableLength > maxBuffered) {
      streams.delete(s);
      s.res.end();
      return;
    }
    s.res.write(text);
  };
  const heartbeat = setInterval(() => {
    for (const s of streams) write(s, ": keep-alive\n\n");
  }, opts.heartbeatMs ?? 15_000);
  heartbeat.unref();

  const events = (req: IncomingMessage, res: ServerResponse): void => {
    if (streams.size >= maxStreams)
      return sendJson(req, res, 503, { error: `too many event streams open (${maxStreams}): try again later` });
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
    });
    if (req.method === "HEAD") return void res.end();
    const s: Stream = { res };
    streams.add(s);
    req.socket.setNoDelay(true);
    res.write("retry: 2000\n\n");
    const last = Number(req.headers["last-event-id"]);
    if (Number.isInteger(last) && last > 0) {
      // Events after the last one seen; when they are no longer all kept, the page reads everything again.
      const first = recent[0]?.id ?? nextId;
      if (last + 1 < first || last >= nextId) write(s, `id: ${nextId - 1}\nevent: reset\ndata: {}\n\n`);
      else for (const e of recent) if (e.id > last) write(s, e.text);
    } else write(s, `id: ${nextId - 1}\nevent: hello\ndata: {}\n\n`);
    const done = (): void => void streams.delete(s);
    req.once("close", done);
    res.once("close", done);
  };

  const api = async (req: IncomingMessage, res: ServerResponse, path: string, params: URLSearchParams) => {
    const p = opts.provider;
    if (path === "/api/v1/fleet") return sendJson(req, res, 200, p.summary());
    if (path === "/api/v1/rollout") return sendJson(req, res, 200, p.rollout() ?? null);
    if (path === "/api/v1/events") return events(req, res);
    if (path === "/api/v1/clusters")
      return sendJson(req, res, 200, maskedPage(queryRows(p.rows(), parseQuery(params))), true);
    const m = /^\/api\/v1\/clusters\/([^/]+)(\/doctor)?$/.exec(path);
    if (m) {
      const name = decodeURIComponent(m[1]!);
      if (m[2]) {
        if (!p.rows().some((r) => r.name === name)) return sendJson(req, res, 404, { error: `no cluster ${name}` });
        const report = p.doctor ? await p.doctor(name) : undefined;
        if (report === undefined)
          return sendJson(req, res, 501, {
            error: `vc doctor needs a host read with your credentials: run vc doctor ${name}, or vc ui --target kube`,
          });
        return sendJson(req, res, 200, report);
      }
      const detail = await p.cluster(name);
      return detail ? sendJson(req, res, 200, detail) : sendJson(req, res, 404, { error: `no cluster ${name}` });
    }
    sendJson(req, res, 404, { error: `no such API path: ${path}` });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? "/", "http://page.invalid");
    const path = url.pathname;
    if (!isUiPath(path)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(req, res, 405, "text/plain; charset=utf-8", "read-only: use GET or HEAD\n", { Allow: "GET, HEAD" });
      return true;
    }
    if (PAGE_PATHS.test(path)) {
      send(req, res, 200, "text/html; charset=utf-8", assets.page, { "Cache-Control": "no-cache" });
      return true;
    }
    if (path.startsWith("/ui/")) {
      const asset = assets.files.get(path.slice(4));
      if (!asset) send(req, res, 404, "text/plain; charset=utf-8", "not found\n");
      else send(req, res, 200, asset.type, asset.body, { "Cache-Control": "no-cache", ETag: asset.etag });
      return true;
    }
    const run = async (): Promise<void> => {
      const decision = opts.authorize ? await opts.authorize(req) : { allowed: true as const };
      if (!decision.allowed) {
        const extra: Record<string, string> =
          decision.status === 401 ? { "WWW-Authenticate": 'Bearer realm="vc"' } : {};
        return send(
          req,
          res,
          decision.status,
          "application/json; charset=utf-8",
          jsonBody({ error: decision.message }),
          {
            "Cache-Control": "no-store",
            ...extra,
          },
        );
      }
      await api(req, res, path, url.searchParams);
    };
    run().catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      if (err instanceof QueryError) return sendJson(req, res, 400, { error: err.message });
      sendJson(req, res, 500, { error: (err as Error).message ?? String(err) });
    });
    return true;
  };
  return Object.assign(handle, {
    close() {
      clearInterval(heartbeat);
      unsubscribe();
      for (const s of streams) s.res.end();
      streams.clear();
    },
  });
}

export interface RunningUi {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves the page alone (`vc ui`) on host:port; other paths are 404. */
export async function startUiServer(handler: UiHandler, host: string, port: number): Promise<RunningUi> {
  const server = createServer((req, res) => {
    if (handler(req, res)) return;
    send(req, res, 404, "text/plain; charset=utf-8", "not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    server,
    url: `http://${a.address.includes(":") ? `[${a.address}]` : a.address}:${a.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        handler.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
