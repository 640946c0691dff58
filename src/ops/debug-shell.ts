// `vc debug shell`: an interactive shell in the control-plane pod `<name>-0`, container `syncer`, over the exec API.
import { Writable, type Readable } from "node:stream";
import type { IncomingMessage } from "node:http";
import { Exec } from "@kubernetes/client-node";
// Not re-exported by the package index: the handler that takes a socket factory.
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import WebSocket from "ws";
import type { Host } from "./host.js";
import { P } from "./paths.js";
import type { PodLike } from "../health/pod-causes.js";

export class ShellError extends Error {}

const SHELL_CONTAINER = "syncer";

export interface ShellOptions {
  cluster: string;
  namespace: string;
  command: string[];
  stdin?: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Resizes are forwarded when this is a terminal (has rows, columns and 'resize' events). */
  stdout?: Writable;
  stderr?: Writable;
  /** Default: whether stdin is a terminal. */
  tty?: boolean;
}

/** The exec protocol's channel for terminal sizes. */
const RESIZE_CHANNEL = 4;

type Terminal = Writable & { columns: number; rows: number };

function isTerminal(w: Writable): w is Terminal {
  const t = w as Partial<Terminal>;
  return typeof t.columns === "number" && typeof t.rows === "number";
}

/** Why the pod cannot take a shell, or undefined when it can. */
function notRunning(pod: PodLike | undefined, name: string, namespace: string, cluster: string): string | undefined {
  if (!pod)
    return (
      `pod ${namespace}/${name} not found: the control plane of ${cluster} is not running (scaled to 0, or ` +
      `not applied); run vc doctor ${cluster}`
    );
  const phase = pod.status?.phase ?? "Unknown";
  const cs = pod.status?.containerStatuses?.find((c) => c.name === SHELL_CONTAINER);
  if (phase !== "Running") {
    const waiting = cs?.state?.waiting?.reason;
    return (
      `pod ${namespace}/${name} is ${phase}${waiting ? ` (${SHELL_CONTAINER}: ${waiting})` : ""}, not ` +
      `Running: no shell possible; run vc doctor ${cluster}`
    );
  }
  if (!(pod.spec?.containers ?? []).some((c) => c.name === SHELL_CONTAINER))
    return `pod ${namespace}/${name} has no container ${SHELL_CONTAINER}`;
  if (cs && !cs.state?.running) {
    const reason = cs.state?.waiting?.reason ?? cs.state?.terminated?.reason ?? "not running";
    return (
      `container ${SHELL_CONTAINER} of pod ${namespace}/${name} is ${reason}: no shell possible; run vc ` +
      `doctor ${cluster}`
    );
  }
  return undefined;
}

/** Bytes of a refused upgrade's answer read for its reason (a Status is a few hundred). */
const REFUSAL_BYTES = 16 * 1024;

/**
 * The exec connection's WebSocket, whose refusal (an answer other than 101) fails with the server's reason, as kubectl
 * shows it ("pods \"x\" is forbidden: …"), instead of ws's "Unexpected server response: 403".
 */
function socketWithReason(uri: string, protocols: string[], opts: WebSocket.ClientOptions): WebSocket {
  const ws = new WebSocket(uri, protocols, opts);
  ws.on("unexpected-response", (req, res: IncomingMessage) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (body.length < REFUSAL_BYTES) body += chunk;
    });
    res.on("end", () => {
      req.destroy();
      ws.emit("error", new Error(refusalReason(res.statusCode ?? 0, body)));
      ws.emit("close", 1006, Buffer.alloc(0));
    });
    res.on("error", () => undefined);
  });
  return ws;
}

/** HTTP status and the server's message: a Status's `message`, else the answer's first line. */
function refusalReason(status: number, body: string): string {
  let message: string | undefined;
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    message = body.trim().split("\n")[0];
  }
  return `HTTP ${status}${message ? `: ${message.slice(0, 500)}` : ""}`;
}

interface ExecStatus {
  status?: string;
  message?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** The remote command's exit code from the exec status message. */
function exitCodeOf(status: ExecStatus | undefined): number {
  if (!status || status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const code = Number(cause?.message);
  return Number.isInteger(code) && code > 0 ? code : 1;
}

/** Runs the shell; resolves with its exit code when the session ends. */
export async function debugShell(host: Host, o: ShellOptions): Promise<number> {
  const podName = `${o.cluster}-0`;
  const pod = await host.get<PodLike>(P.pods(o.namespace, podName));
  const why = notRunning(pod, podName, o.namespace, o.cluster);
  if (why) throw new ShellError(why);
  const stdin = o.stdin ?? process.stdin;
  const stdout = o.stdout ?? process.stdout;
  const stderr = o.stderr ?? process.stderr;
  const tty = o.tty ?? !!stdin.isTTY;
  const raw = tty && typeof stdin.setRawMode === "function";
  if (raw) stdin.setRawMode!(true);
  try {
    let status: ExecStatus | undefined;
    // Resizes are sent here (capitalised keys, as the API server's TerminalSize), so client-node gets a plain sink.
    const terminal = tty && isTerminal(stdout) ? stdout : undefined;
    const sink = terminal ? new Writable({ write: (chunk, _enc, cb) => void stdout.write(chunk, cb) }) : stdout;
    const ws = await new Exec(host.config, new WebSocketHandler(host.config, socketWithReason))
      .exec(o.namespace, podName, SHELL_CONTAINER, o.command, sink, tty ? null : stderr, stdin, tty, (s) => {
        status = s as ExecStatus;
      })
      .catch((err: unknown) => {
        throw new ShellError(
          `cannot open a shell in ${o.namespace}/${podName}: ${(err as Error).message ?? String(err)}`,
        );
      });
    const sendSize = () => {
      if (terminal && ws.readyState === ws.OPEN)
        ws.send(
          Buffer.concat([
            Buffer.from([RESIZE_CHANNEL]),
            Buffer.from(JSON.stringify({ Width: terminal.columns, Height: terminal.rows })),
          ]),
        );
    };
    sendSize();
    terminal?.on("resize", sendSize);
    await new Promise<void>((resolve) => {
      ws.on("close", () => resolve());
      ws.on("error", () => resolve());
    });
    terminal?.off("resize", sendSize);
    if (status?.status === "Failure" && !status.details?.causes?.some((c) => c.reason === "ExitCode")) {
      throw new ShellError(`the shell in ${o.namespace}/${podName} failed: ${status.message ?? "unknown error"}`);
    }
    return exitCodeOf(status);
  } finally {
    if (raw) stdin.setRawMode!(false);
    stdin.pause();
  }
}
