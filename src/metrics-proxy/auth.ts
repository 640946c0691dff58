// Authentication of clients: who asks, for which cluster. Deployed, the proxy trusts only the front proxies of the
// virtual API servers (front-proxy.ts; the shared proxy tells their clusters apart by the CA that signed the front
// proxy's certificate, clusters.ts); a proxy of one cluster without a virtual cluster to delegate to (tests,
// standalone) takes a bearer token from --token-file and/or a client certificate signed by --client-ca.
import { timingSafeEqual, createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Decision, RequestAttributes } from "./authorizer.js";
import { frontProxyUser, peerOf, type RequestHeaderConfig, type RequestUser } from "./front-proxy.js";
import type { ClusterScope } from "./scope.js";

/**
 * Who a request comes from: the cluster it is answered for, the user (when the method tells) and who decides for it.
 */
export interface Caller {
  scope: ClusterScope;
  user?: RequestUser;
  /** Decides whether the user may make a request (the cluster's API server); absent: every request is allowed. */
  authorize?: (user: RequestUser, attrs: RequestAttributes) => Promise<Decision>;
}

/** The outcome of authenticating a request: who asks, or why it is refused. */
export type Authentication = { ok: true; caller: Caller } | { ok: false; reason: string };

export interface RequestAuthenticator {
  /** True when every request is let in. */
  readonly open: boolean;
  authenticate(req: IncomingMessage): Authentication;
}

export interface AuthOptions {
  /** Accepted bearer tokens; undefined when token authentication is off. */
  tokens?: readonly string[];
  /** True when the HTTPS server verifies client certificates against --client-ca. */
  clientCertificates?: boolean;
}

/**
 * Reads a token file: one token per line, blank lines and `#` comments ignored. A line of the API
 * server's static token CSV (`token,user,uid,"groups"`) counts by its first field, so both forms work.
 */
export function readTokenFile(path: string): string[] {
  const tokens = readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) =>
      l
        .split(",")[0]!
        .trim()
        .replace(/^"(.*)"$/, "$1"),
    )
    .filter((t) => t !== "");
  if (tokens.length === 0) throw new Error(`token file ${path} holds no token`);
  return tokens;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Static credentials: --token-file tokens and --client-ca certificates (no user identity, so no authorization). */
export class Authenticator implements RequestAuthenticator {
  private readonly digests: Buffer[];
  constructor(
    private readonly scope: ClusterScope,
    private readonly opts: AuthOptions,
  ) {
    this.digests = (opts.tokens ?? []).map(digest);
  }

  /** True when no authentication is configured: every request is let in. */
  get open(): boolean {
    return this.digests.length === 0 && !this.opts.clientCertificates;
  }

  authenticate(req: IncomingMessage): Authentication {
    return this.accepts(req)
      ? { ok: true, caller: { scope: this.scope } }
      : { ok: false, reason: "no known bearer token or verified client certificate" };
  }

  /** True when the request presents a known bearer token or a verified client certificate. */
  private accepts(req: IncomingMessage): boolean {
    if (this.open) return true;
    if (this.opts.clientCertificates) {
      const socket = req.socket as TLSSocket;
      if (socket.authorized === true && typeof socket.getPeerCertificate === "function" && peerOf(socket).presented)
        return true;
    }
    const header = req.headers.authorization;
    if (this.digests.length > 0 && header && /^bearer /i.test(header)) {
      const presented = digest(header.slice(7).trim());
      // Compare against every token in constant time per token.
      let ok = false;
      for (const d of this.digests) ok = timingSafeEqual(d, presented) || ok;
      return ok;
    }
    return false;
  }
}

/**
 * The front proxy of one virtual API server, with the request-header settings read from the virtual cluster
 * (`current()` is undefined until they are loaded: every request is refused then).
 */
export class FrontProxyAuthenticator implements RequestAuthenticator {
  readonly open = false;
  constructor(
    private readonly scope: ClusterScope,
    private readonly current: () => RequestHeaderConfig | undefined,
    private readonly authorize: Caller["authorize"],
  ) {}

  authenticate(req: IncomingMessage): Authentication {
    const config = this.current();
    if (!config) return { ok: false, reason: "the front proxy's client CA is not loaded yet" };
    const user = frontProxyUser(req, config);
    if (typeof user === "string") return { ok: false, reason: user };
    return { ok: true, caller: { scope: this.scope, user, ...(this.authorize ? { authorize: this.authorize } : {}) } };
  }
}
