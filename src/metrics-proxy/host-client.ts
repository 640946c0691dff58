// HTTP client of an API server (the host's, or the virtual cluster's) over a HostTransport (kubeconfig or in-cluster):
// JSON requests and line-delimited watch streams.
import http from "node:http";
import https from "node:https";
import type { HostTransport } from "./kubeconfig.js";

export interface HostResponse {
  status: number;
  /** Parsed JSON body, or undefined when the body was not JSON. */
  body: unknown;
  text: string;
}

/** Observes each host request: path kind (a short label), HTTP status or "error", duration in seconds. */
export type HostObserver = (resource: string, code: string, seconds: number) => void;

/** A transport failure (connection refused, reset, timeout): the host was not reached or did not answer. */
export class HostUnreachable extends Error {}

/** An answer longer than the request allowed (`maxBytes`): it was not read to its end. */
export class AnswerTooLarge extends Error {}

/** How one request is sent and how much of its answer is read. */
export interface RequestOptions {
  /** A JSON body (sent with `contentType`). */
  body?: unknown;
  /** Content type of the body (default application/json; patches name theirs). */
  contentType?: string;
  /** The Accept header (default application/json). */
  accept?: string;
  /** Most bytes of the answer read; past them the request is aborted with AnswerTooLarge (default 64 MiB). */
  maxBytes?: number;
  signal?: AbortSignal;
}

/** How the client keeps its connections. */
export interface ClientOptions {
  /** Connections to the server at once (default 16). */
  maxSockets?: number;
  /** How long an idle kept-alive connection stays open (default 60 s). */
  idleMs?: number;
  /** How long a request may wait for its answer (default 10 s). */
  timeoutMs?: number;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export class HostClient {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly tls: https.RequestOptions;
  private readonly timeoutMs: number;

  constructor(
    private readonly transport: HostTransport,
    private readonly observe: HostObserver = () => {},
    opts: ClientOptions = {},
  ) {
    this.base = transport.server;
    this.tls = transport.tls;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    const agentOptions = {
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 16,
      maxFreeSockets: Math.min(opts.maxSockets ?? 16, 4),
      timeout: opts.idleMs ?? 60_000,
    };
    this.agent =
      this.base.protocol === "https:"
        ? new https.Agent({ ...agentOptions, ...(this.tls as https.AgentOptions) })
        : new http.Agent(agentOptions);
  }

  get server(): string {
    return this.base.toString();
  }

  private async headers(accept = "application/json"): Promise<Record<string, string>> {
    return { Accept: accept, "User-Agent": "vc-metrics-proxy", ...(await this.transport.headers()) };
  }

  private open(path: string, headers: Record<string, string>, timeoutMs: number, method = "GET"): http.ClientRequest {
    const url = new URL(path, this.base);
    const basePath = this.base.pathname.replace(/\/$/, "");
    const mod = this.base.protocol === "https:" ? https : http;
    return mod.request({
      ...this.tls,
      protocol: this.base.protocol,
      hostname: this.base.hostname.replace(/^\[|\]$/g, ""),
      port: this.base.port || (this.base.protocol === "https:" ? 443 : 80),
      path: `${basePath}${url.pathname}${url.search}`,
      method,
      headers,
      agent: this.agent,
      timeout: timeoutMs,
    });
  }

  /** GETs `path` (with query) and returns status and parsed body; throws HostUnreachable on transport failure. */
  get(path: string, resource: string, opts: Omit<RequestOptions, "body" | "contentType"> = {}): Promise<HostResponse> {
    return this.send("GET", path, resource, opts);
  }

  /**
   * Sends a request and returns status and parsed body. Throws HostUnreachable on transport failure (or abort) and
   * AnswerTooLarge when the answer is longer than `maxBytes`.
   */
  async send(method: string, path: string, resource: string, opts: RequestOptions = {}): Promise<HostResponse> {
    const headers = await this.headers(opts.accept);
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined)
      Object.assign(headers, {
        "Content-Type": opts.contentType ?? "application/json",
        "Content-Length": String(Buffer.byteLength(payload)),
      });
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    const signal = opts.signal;
    const start = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - start) / 1e9;
    return new Promise<HostResponse>((resolve, reject) => {
      const req = this.open(path, headers, this.timeoutMs, method);
      req.on("timeout", () => req.destroy(new HostUnreachable(`timed out after ${this.timeoutMs} ms`)));
      if (signal) {
        const abort = () => req.destroy(new HostUnreachable("aborted"));
        if (signal.aborted) abort();
        else signal.addEventListener("abort", abort, { once: true });
        req.once("close", () => signal.removeEventListener("abort", abort));
      }
      req.on("error", (err) => {
        this.observe(resource, "error", seconds());
        reject(
          err instanceof HostUnreachable || err instanceof AnswerTooLarge ? err : new HostUnreachable(err.message),
        );
      });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) req.destroy(new AnswerTooLarge(`the answer is longer than ${maxBytes} bytes`));
          else chunks.push(c);
        });
        res.on("error", (err) => reject(new HostUnreachable(err.message)));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          this.observe(resource, String(res.statusCode ?? 0), seconds());
          resolve({ status: res.statusCode ?? 0, body, text });
        });
      });
      req.end(payload);
    });
  }

  /**
   * Opens a watch on `path` (query included) and calls `onEvent` for each JSON line. Resolves with the HTTP status when
   * the stream ends (200 for a normal end); the body of a non-200 answer goes to `onEvent` once. `signal` aborts the
   * stream; a line longer than `maxLineBytes` ends it (rejected with AnswerTooLarge: the caller lists again).
   */
  async watch(
    path: string,
    onEvent: (event: unknown) => void,
    signal: AbortSignal,
    opts: { accept?: string; maxLineBytes?: number } = {},
  ): Promise<number> {
    const headers = await this.headers(opts.accept);
    const maxLine = opts.maxLineBytes ?? 4 * 1024 * 1024;
    return new Promise<number>((resolve, reject) => {
      if (signal.aborted) return resolve(0);
      // A silent connection (no bytes for longer than the server-side timeoutSeconds of 300) is a dead one.
      const req = this.open(path, headers, 330_000);
      req.on("timeout", () => req.destroy(new HostUnreachable("the watch went silent")));
      const abort = () => req.destroy();
      signal.addEventListener("abort", abort, { once: true });
      const done = (fn: () => void) => {
        signal.removeEventListener("abort", abort);
        fn();
      };
      req.on("error", (err) =>
        done(() =>
          signal.aborted ? resolve(0) : reject(err instanceof AnswerTooLarge ? err : new HostUnreachable(err.message)),
        ),
      );
      req.on("response", (res) => {
        let buffer = "";
        res.setEncoding("utf8");
        const emit = (line: string) => {
          try {
            onEvent(JSON.parse(line));
          } catch {
            // a malformed line is skipped; the next relist repairs the index
          }
        };
        res.on("data", (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line) emit(line);
          }
          if (buffer.length > maxLine) req.destroy(new AnswerTooLarge(`a watch event is longer than ${maxLine} bytes`));
        });
        res.on("error", () => done(() => resolve(signal.aborted ? 0 : (res.statusCode ?? 0))));
        res.on("end", () => {
          if (buffer.trim()) emit(buffer.trim());
          done(() => resolve(res.statusCode ?? 0));
        });
      });
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
