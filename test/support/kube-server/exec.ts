// pods/<name>/exec over websocket (v5/v4.channel.k8s.io): the test's handler gets stdin/stdout/stderr, resizes and an
// exit call.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { PassThrough, Writable } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { Auth } from "./auth.js";
import type { Faults } from "./faults.js";
import { requestUrl } from "./http.js";
import type { RequestLog, LoggedRequest } from "./request-log.js";
import { ApiError, notFound } from "./status.js";
import type { Store } from "./store.js";

export interface ExecSession {
  namespace: string;
  pod: string;
  container: string;
  command: string[];
  tty: boolean;
  /** What the client types; ends when the client closes stdin. null when the client sent no stdin. */
  stdin: PassThrough | null;
  stdout: Writable;
  stderr: Writable;
  /** Terminal sizes the client reports (tty only). */
  onResize(listener: (size: { width: number; height: number }) => void): void;
  /** Ends the session with the command's exit code (0: success). */
  exit(code: number): void;
}

export type ExecHandler = (session: ExecSession) => void | Promise<void>;

const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const RESIZE = 4;
const CLOSE = 255;

function exitStatus(code: number, command: string[]): string {
  if (code === 0) return JSON.stringify({ metadata: {}, status: "Success" });
  return JSON.stringify({
    metadata: {},
    status: "Failure",
    message:
      `command terminated with non-zero exit code: error executing command [${command.join(" ")}], exit ` +
      `code ${code}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] },
  });
}

function channelWriter(ws: WebSocket, channel: number): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (ws.readyState !== ws.OPEN) return cb();
      ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(chunk)]), cb);
    },
  });
}

function rejectUpgrade(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.toStatus());
  socket.end(
    `HTTP/1.1 ${err.code} ${err.reason}\r\nContent-Type: application/json\r\nContent-Length: ` +
      `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** How long after the upgrade an exec's command starts (see run). */
const EXEC_START_MS = 50;

export function attachExec(
  server: Server,
  deps: { auth: Auth; store: Store; log: RequestLog; faults: Faults },
): { setHandler(h: ExecHandler): void; close(): void } {
  let handler: ExecHandler | undefined;
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => PROTOCOLS.find((p) => protocols.has(p)) ?? false,
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = requestUrl(req.url);
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach)$/.exec(url.pathname);
    const entry: LoggedRequest = {
      method: "GET",
      path: url.pathname,
      query: url.search.replace(/^\?/, ""),
      status: 0,
      verb: "create",
      resource: "pods",
      subresource: "exec",
    };
    deps.log.add(entry);
    try {
      for (const f of deps.faults.match("GET", url.pathname)) {
        if (f.reset) return void socket.destroy();
        if (f.status !== undefined) throw new ApiError(f.status, `injected fault`);
      }
      if (!m) throw new ApiError(404, "the server could not find the requested resource", "NotFound");
      const [ns, pod] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
      entry.namespace = ns;
      entry.name = pod;
      const user = deps.auth.authenticate(req.headers.authorization);
      entry.user = user.name;
      deps.auth.authorize(user, {
        verb: "create",
        group: "",
        resource: "pods",
        subresource: "exec",
        namespace: ns,
        name: pod,
      });
      const live = deps.store.get("v1/Pod", ns, pod);
      if (!live) throw notFound("pods", "", pod);
      const containers = (
        (live.obj.spec as { containers?: Array<{ name: string }> } | undefined)?.containers ?? []
      ).map((c) => c.name);
      const container = url.searchParams.get("container") ?? containers[0] ?? "";
      if (!containers.includes(container))
        throw new ApiError(400, `container ${container} is not valid for pod ${pod}`, "BadRequest");
      const command = url.searchParams.getAll("command");
      if (command.length === 0) throw new ApiError(400, "you must specify at least 1 command", "BadRequest");
      wss.handleUpgrade(req, socket, head, (ws) => {
        entry.status = 101;
        run(ws, {
          namespace: ns,
          pod,
          container,
          command,
          tty: url.searchParams.get("tty") === "true",
          stdin: url.searchParams.get("stdin") === "true",
        });
      });
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, String(err));
      entry.status = e.code;
      rejectUpgrade(socket, e);
    }
  });

  function run(
    ws: WebSocket,
    p: { namespace: string; pod: string; container: string; command: string[]; tty: boolean; stdin: boolean },
  ): void {
    const stdin = p.stdin ? new PassThrough() : null;
    const resizeListeners: Array<(s: { width: number; height: number }) => void> = [];
    const earlySizes: Array<{ width: number; height: number }> = [];
    let done = false;
    const session: ExecSession = {
      namespace: p.namespace,
      pod: p.pod,
      container: p.container,
      command: p.command,
      tty: p.tty,
      stdin,
      stdout: channelWriter(ws, STDOUT),
      stderr: channelWriter(ws, STDERR),
      onResize: (l) => {
        resizeListeners.push(l);
        // Sizes sent before the command started (a terminal sends its size at once) reach its first listener.
        for (const size of earlySizes.splice(0)) l(size);
      },
      exit(code) {
        if (done) return;
        done = true;
        const finish = () => {
          if (ws.readyState === ws.OPEN)
            ws.send(Buffer.concat([Buffer.from([ERROR]), Buffer.from(exitStatus(code, p.command))]), () =>
              ws.close(1000),
            );
        };
        // Let pending stdout/stderr writes go out first.
        setImmediate(finish);
      },
    };
    ws.on("message", (data: Buffer) => {
      const buf = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (buf.length === 0) return;
      const channel = buf[0]!;
      const payload = buf.subarray(1);
      if (channel === STDIN && stdin && payload.length > 0) stdin.write(payload);
      else if (channel === RESIZE) {
        try {
          // The API server decodes TerminalSize with Go's case-insensitive field matching: Width or width.
          const raw = JSON.parse(payload.toString("utf8")) as Record<string, unknown>;
          const field = (name: string) => Number(Object.entries(raw).find(([k]) => k.toLowerCase() === name)?.[1] ?? 0);
          const size = { width: field("width"), height: field("height") };
          if (resizeListeners.length === 0) earlySizes.push(size);
          for (const l of resizeListeners) l(size);
        } catch {
          /* a malformed resize message is ignored, as upstream does */
        }
      } else if (channel === CLOSE && payload[0] === STDIN && stdin) stdin.end();
    });
    ws.on("close", () => {
      stdin?.end();
      done = true;
    });
    // The command starts a moment after the upgrade, as a container runtime's exec does: kubectl before 1.34 (client-go
    // before kubernetes/kubernetes#131203) reads the connection before it has created its streams and drops what
    // arrives for them meanwhile, so output written at once was sometimes lost.
    setTimeout(() => {
      if (done) return;
      if (!handler) {
        session.stderr.write("the test server has no exec handler: call server.onExec(...)\n");
        session.exit(126);
        return;
      }
      Promise.resolve(handler(session)).catch((err: unknown) => {
        session.stderr.write(`${(err as Error)?.message ?? String(err)}\n`);
        session.exit(1);
      });
    }, EXEC_START_MS);
  }

  return {
    setHandler(h) {
      handler = h;
    },
    close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
