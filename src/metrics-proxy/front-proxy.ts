// Request-header authentication of an aggregated API server: the virtual API server's front proxy presents a client
// certificate signed by its request-header CA, with an allowed name, and says who the user is in request headers.
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";

/** Namespace and name of the ConfigMap in which an API server publishes how it authenticates to extension servers. */
export const AUTH_CONFIGMAP_NAMESPACE = "kube-system";
export const AUTH_CONFIGMAP_NAME = "extension-apiserver-authentication";

/** What the API server's front proxy is, read from its ConfigMap (the `--requestheader-*` flags of the API server). */
export interface RequestHeaderConfig {
  /** PEM of the CA that signs the front proxy's client certificate (`requestheader-client-ca-file`). */
  clientCA: string;
  /** Common names the front proxy's certificate may have; empty: any name signed by the CA. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** The user a request acts for, as the front proxy asserts it. */
export interface RequestUser {
  name: string;
  groups: string[];
  extra: Record<string, string[]>;
}

function jsonList(text: unknown, what: string): string[] {
  if (text === undefined || text === "") return [];
  if (typeof text !== "string") throw new Error(`${what} is not a JSON list`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not a JSON list`);
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw new Error(`${what} is not a list of strings`);
  return v as string[];
}

/**
 * The request-header settings of the ConfigMap's data; throws when it has no request-header CA (no front proxy
 * configured).
 */
export function requestHeaderConfig(data: Record<string, unknown> | undefined): RequestHeaderConfig {
  const clientCA = data?.["requestheader-client-ca-file"];
  if (data === undefined || typeof clientCA !== "string" || !clientCA.includes("BEGIN CERTIFICATE")) {
    throw new Error(
      `${AUTH_CONFIGMAP_NAMESPACE}/${AUTH_CONFIGMAP_NAME} has no requestheader-client-ca-file: start the virtual ` +
        "API server with --requestheader-client-ca-file (and --proxy-client-cert-file)",
    );
  }
  const usernameHeaders = jsonList(data["requestheader-username-headers"], "requestheader-username-headers");
  return {
    clientCA,
    allowedNames: jsonList(data["requestheader-allowed-names"], "requestheader-allowed-names"),
    usernameHeaders: usernameHeaders.length > 0 ? usernameHeaders : ["X-Remote-User"],
    groupHeaders: jsonList(data["requestheader-group-headers"], "requestheader-group-headers"),
    extraHeaderPrefixes: jsonList(data["requestheader-extra-headers-prefix"], "requestheader-extra-headers-prefix"),
  };
}

/** Why a request is not authenticated; undefined when it is. */
export type Refusal = string;

/**
 * The user of a request that came through the front proxy: the TLS client certificate must have been verified
 * against the request-header CA (the server's `ca`) and carry an allowed common name; the user is the first
 * username header that is set. Anything else is a refusal (a 401), never an anonymous user.
 */
export function frontProxyUser(req: IncomingMessage, cfg: RequestHeaderConfig): RequestUser | Refusal {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== "function") return "not a TLS connection";
  const peer = peerOf(socket);
  if (!peer.presented) return "no client certificate";
  if (socket.authorized !== true)
    return `client certificate not signed by the front proxy's CA (${socket.authorizationError ?? "unverified"})`;
  const cn = peer.commonName;
  if (cfg.allowedNames.length > 0 && (cn === undefined || !cfg.allowedNames.includes(cn)))
    return `client certificate name "${cn ?? ""}" is not an allowed front proxy name`;
  const values = (header: string): string[] => {
    const v = req.headersDistinct[header.toLowerCase()];
    return (v ?? []).filter((x) => x !== "");
  };
  const name = cfg.usernameHeaders.map((h) => values(h)[0]).find((v) => v !== undefined);
  if (!name) return "no user in the request headers";
  const groups = withAuthenticatedGroup(cfg.groupHeaders.flatMap(values));
  const extra: Record<string, string[]> = {};
  for (const [header, v] of Object.entries(req.headersDistinct)) {
    const prefix = cfg.extraHeaderPrefixes.find((p) => header.startsWith(p.toLowerCase()));
    if (!prefix || !v) continue;
    const key = decodeExtraKey(header.slice(prefix.length));
    extra[key] = [...(extra[key] ?? []), ...v];
  }
  return { name, groups, extra };
}

/** What a connection's peer presented: read once per connection (reading it builds a new object every time). */
const peers = new WeakMap<TLSSocket, { presented: boolean; commonName?: string }>();

/** Whether the peer of a TLS connection presented a certificate, and its common name. */
export function peerOf(socket: TLSSocket): { presented: boolean; commonName?: string } {
  let peer = peers.get(socket);
  if (!peer) {
    const cert = socket.getPeerCertificate();
    const cn = cert?.subject?.CN;
    const commonName = typeof cn === "string" ? cn : Array.isArray(cn) ? cn[0] : undefined;
    peer = { presented: Boolean(cert?.subject), ...(commonName !== undefined ? { commonName } : {}) };
    peers.set(socket, peer);
  }
  return peer;
}

/**
 * The groups of an authenticated user with `system:authenticated` added, as every server built on k8s.io/apiserver adds
 * it to front-proxy users (unless already there, or the user is unauthenticated): the aggregator's own discovery
 * requests come with no group, and RBAC grants discovery paths to `system:authenticated`.
 */
export function withAuthenticatedGroup(groups: string[]): string[] {
  if (groups.includes("system:authenticated") || groups.includes("system:unauthenticated")) return groups;
  return [...groups, "system:authenticated"];
}

/** Extra keys are lower-cased and percent-encoded in header names (as the API server writes them). */
function decodeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key).toLowerCase();
  } catch {
    return key.toLowerCase();
  }
}
