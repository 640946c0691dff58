// A real git HTTP server for tests: `git http-backend` behind a small CGI wrapper on loopback, plus a helper repo.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { createServer, type Server, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const BACKEND = "/usr/lib/git-core/git-http-backend";

export interface GitServerOptions {
  /** Require this Authorization header value (e.g. `Bearer tok` or `Basic ...`); 401 otherwise. */
  authorization?: string;
  /** Listen on this port (to come back on the same URL after stop()). */
  port?: number;
  /**
   * A slow link: every response body is sent `bytes` at a time, one piece every `everyMs` (alive, never silent
   * longer than that); with `stallAfter`, a response stops after that many bytes and the connection stays open, for
   * good or, with `resumeAfterMs`, for that long before it goes on (a link silent for a while, not dead).
   */
  link?: { bytes: number; everyMs: number; stallAfter?: number; resumeAfterMs?: number };
}

export interface GitServer {
  /** Base URL; a repository `name.git` under the project root is at `${url}/name.git`. */
  url: string;
  port: number;
  /** Folder served (GIT_PROJECT_ROOT). */
  root: string;
  /** Requests received, as `METHOD path?query`. */
  requests: string[];
  /** Authorization headers received (tests check the client sent them; never printed). */
  authHeaders: string[];
  /** Stops listening (the remote goes away); start() brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startGitServer(root: string, opts: GitServerOptions = {}): Promise<GitServer> {
  const requests: string[] = [];
  const authHeaders: string[] = [];
  let server: Server | undefined;
  let port = opts.port ?? 0;

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://localhost");
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.headers.authorization) authHeaders.push(req.headers.authorization);
    if (opts.authorization && req.headers.authorization !== opts.authorization) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' });
      res.end("unauthorized");
      return;
    }
    const child = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REQUEST_METHOD: req.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        CONTENT_LENGTH: req.headers["content-length"] ?? "",
        HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_USER: "test",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    const out = opts.link ? slowLink(res, opts.link) : { write: (b: Buffer) => res.write(b), end: () => res.end() };
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        out.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let sep = head.indexOf("\r\n\r\n");
      let sepLen = 4;
      if (sep < 0) {
        sep = head.indexOf("\n\n");
        sepLen = 2;
      }
      if (sep < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, sep).toString("latin1").split(/\r?\n/)) {
        const i = line.indexOf(":");
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === "status") status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      out.write(head.subarray(sep + sepLen));
    });
    child.stderr.resume();
    child.on("close", () => out.end());
    child.on("error", () => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };

  const start = async (): Promise<void> => {
    const s = createServer(handler);
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => resolve());
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await start();
  const self: GitServer = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    root,
    requests,
    authHeaders,
    stop,
    start,
    close: stop,
  };
  return self;
}

/** A response body sent through a slow link (GitServerOptions.link): queued, then written a piece at a time. */
function slowLink(
  res: ServerResponse,
  link: NonNullable<GitServerOptions["link"]>,
): { write(b: Buffer): void; end(): void } {
  let queued = Buffer.alloc(0);
  let sent = 0;
  let ended = false;
  let stallAfter = link.stallAfter;
  let resumeAt: number | undefined;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    if (stallAfter !== undefined && sent >= stallAfter) {
      // Stalled: silent, the connection open; for good, or until resumeAfterMs have passed.
      if (link.resumeAfterMs === undefined) return;
      resumeAt ??= Date.now() + link.resumeAfterMs;
      if (Date.now() < resumeAt) return;
      stallAfter = undefined;
    }
    const room = stallAfter === undefined ? link.bytes : Math.min(link.bytes, stallAfter - sent);
    const piece = queued.subarray(0, room);
    queued = queued.subarray(piece.length);
    if (piece.length > 0) {
      res.write(piece);
      sent += piece.length;
    }
    if (ended && queued.length === 0) {
      clearInterval(timer);
      res.end();
    }
  }, link.everyMs);
  res.on("close", () => clearInterval(timer));
  return {
    write: (b) => void (queued = Buffer.concat([queued, b])),
    end: () => void (ended = true),
  };
}

/** A working repository pushed to a bare one under a served root: write files, commit, push. */
export class TestRepo {
  readonly root: string;
  readonly work: string;
  readonly bare: string;
  private readonly tmp: string;

  constructor(name = "fleet") {
    this.tmp = mkdtempSync(join(tmpdir(), "vc-git-"));
    this.root = join(this.tmp, "srv");
    this.work = join(this.tmp, "work");
    this.bare = join(this.root, `${name}.git`);
    mkdirSync(this.root);
    git(this.tmp, "init", "-q", "--bare", "-b", "main", this.bare);
    git(this.tmp, "init", "-q", "-b", "main", this.work);
    git(this.work, "config", "user.email", "test@example.com");
    git(this.work, "config", "user.name", "Test");
    git(this.work, "remote", "add", "origin", this.bare);
  }

  /** Path under the served root, for `${server.url}/${repo.path}`. */
  get path(): string {
    return this.bare.slice(this.root.length + 1);
  }

  write(files: Record<string, string | null>): this {
    for (const [file, content] of Object.entries(files)) {
      const p = join(this.work, file);
      if (content === null) rmSync(p, { recursive: true, force: true });
      else {
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, content);
      }
    }
    return this;
  }

  /** Commits everything in the work tree and pushes; returns the commit SHA. */
  commit(message: string, opts: { force?: boolean; ref?: string } = {}): string {
    git(this.work, "add", "-A");
    git(this.work, "commit", "-q", "--allow-empty", "-m", message);
    this.push(opts);
    return this.head();
  }

  push(opts: { force?: boolean; ref?: string } = {}): void {
    git(this.work, "push", "-q", ...(opts.force ? ["--force"] : []), "origin", `HEAD:${opts.ref ?? "refs/heads/main"}`);
  }

  head(): string {
    return git(this.work, "rev-parse", "HEAD").trim();
  }

  run(...args: string[]): string {
    return git(this.work, ...args);
  }

  dispose(): void {
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}
