// The HTTP request pipeline: health paths, authentication, authorization, routing, JSON or Status answers, request
// metrics.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestAuthenticator } from "./auth.js";
import { forbiddenMessage, requestAttributes } from "./authorizer.js";
import type { Logger } from "../model/log.js";
import type { ProxyMetrics } from "./metrics.js";
import { discoveryAnswer } from "./negotiate.js";
import { parseRequestPath, type RequestPath } from "./request-path.js";
import { route, type RouterContext } from "./router.js";
import type { ClusterScope } from "./scope.js";
import { RawJson } from "./serialize.js";
import { ApiError, toApiError, unauthorized } from "./status.js";

export interface ServerDeps {
  ctx: RouterContext;
  auth: RequestAuthenticator;
  metrics: ProxyMetrics;
  log: Logger;
  /** Empty when ready, else the reasons it is not. */
  readiness(): string[];
}

function send(
  res: ServerResponse,
  code: number,
  body: string,
  type = "application/json",
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, {
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-cache, private",
    ...headers,
  });
  res.end(body);
}

function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  send(res, err.code, JSON.stringify(err.toStatus()), "application/json", headers);
}

/** The request listener of the proxy's HTTP(S) server. */
export function requestHandler(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { ctx, auth, metrics, log } = deps;
  return (req, res) => {
    const start = process.hrtime.bigint();
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    const path = q < 0 ? raw : raw.slice(0, q);

    // Probes stay open so the kubelet can call them without credentials, as on the API server.
    if (path === "/healthz" || path === "/livez") return send(res, 200, "ok", "text/plain");
    if (path === "/readyz") {
      const reasons = deps.readiness();
      return reasons.length === 0
        ? send(res, 200, "ok", "text/plain")
        : send(res, 503, `not ready: ${reasons.join("; ")}\n`, "text/plain");
    }
    const authn = auth.authenticate(req);
    if (!authn.ok) {
      log.warn("request failed authentication", { path, remote: req.socket.remoteAddress, reason: authn.reason });
      // The next request opens a new connection: one verified against CAs loaded since this one's handshake.
      return sendError(res, unauthorized(), { Connection: "close" });
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      return sendError(
        res,
        new ApiError("MethodNotAllowed", `the metrics proxy is read-only: ${req.method} is not allowed`),
      );
    }
    // One reading of the path for both authorization and routing: what is authorized is what is served.
    let parsed: RequestPath;
    try {
      parsed = parseRequestPath(path);
    } catch (err) {
      return sendError(res, toApiError(err));
    }
    const query = q < 0 ? "" : raw.slice(q + 1);
    const { caller } = authn;
    if (!caller.authorize || !caller.user) return serve(caller.scope, parsed, query, req, res, start);
    const user = caller.user;
    const attrs = requestAttributes(parsed, ctx.apiGroup);
    caller.authorize(user, attrs).then(
      (decision) => {
        if (decision.allowed) return serve(caller.scope, parsed, query, req, res, start);
        if (decision.undecided) {
          // Not a denial: the virtual API server did not answer in time (or the queue is full). Ask again shortly.
          log.warn("request not authorized: authorization unavailable", {
            path: parsed.path,
            user: user.name,
            reason: decision.reason,
          });
          return sendError(res, new ApiError("ServiceUnavailable", `authorization unavailable: ${decision.reason}`), {
            "Retry-After": "1",
          });
        }
        log.info("request denied", { path: parsed.path, user: user.name, reason: decision.reason });
        sendError(res, new ApiError("Forbidden", forbiddenMessage(user.name, attrs, decision.reason)));
      },
      (err) => sendError(res, toApiError(err)),
    );
  };

  function serve(
    scope: ClusterScope,
    parsed: RequestPath,
    query: string,
    req: IncomingMessage,
    res: ServerResponse,
    start: bigint,
  ): void {
    const path = parsed.path;
    if (path === "/metrics") {
      metrics.registry.metrics().then(
        (text) => send(res, 200, text, metrics.registry.contentType),
        (err) => sendError(res, toApiError(err)),
      );
      return;
    }

    let labels = { verb: "GET", group: "", resource: "" };
    const finish = (code: number) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.requestDuration.observe(labels, seconds);
      metrics.requests.inc({ ...labels, code: String(code) });
    };
    const fail = (err: unknown) => {
      const e = toApiError(err);
      if (e.code >= 500) log.error("request failed", { path, code: e.code, error: e.message });
      sendError(res, e);
      finish(e.code);
    };
    try {
      const r = route(ctx, scope, parsed, new URLSearchParams(query), req.headers.accept);
      labels = { verb: r.verb, group: r.group, resource: r.resource };
      if (r.resource === "discovery") {
        // Discovery is negotiated: legacy documents, aggregated lists on /api and /apis, 304 for a held ETag, 406
        // otherwise.
        const answer = discoveryAnswer(req.headers.accept, req.headers["if-none-match"], r.run, r.aggregated);
        res.writeHead(answer.status, { ...answer.headers, "Content-Length": Buffer.byteLength(answer.body) });
        res.end(answer.body);
        finish(answer.status);
        return;
      }
      Promise.resolve(r.run()).then((body) => {
        send(res, 200, body instanceof RawJson ? body.json : JSON.stringify(body));
        finish(200);
      }, fail);
    } catch (err) {
      fail(err);
    }
  }
}
