// Loads how to reach the host: a kubeconfig file or the in-cluster service account, without client-node in the common
// case.
// client-node costs ~75 MiB of resident memory when imported, so token/certificate kubeconfigs and the in-cluster
// account are read here; kubeconfigs with exec or auth-provider plugins fall back to client-node's KubeConfig.
import { readFileSync } from "node:fs";
import type https from "node:https";
import { dirname, isAbsolute, join } from "node:path";
import { load } from "js-yaml";
import type { SafeEntries } from "../host/inline-kubeconfig.js";
import { asRecord, stringAt, type JsonRecord } from "./json.js";

export interface HostTransport {
  server: URL;
  /** TLS material for an https server. */
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean; servername?: string };
  /** Request headers carrying the credentials, read fresh for every request (rotated tokens). */
  headers(): Promise<Record<string, string>>;
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

function fileOrData(base: string, file: unknown, data: unknown): Buffer | undefined {
  if (typeof data === "string" && data) return Buffer.from(data, "base64");
  if (typeof file === "string" && file) return readFileSync(isAbsolute(file) ? file : join(base, file));
  return undefined;
}

/** The in-cluster transport: the API server from the environment, the mounted service account token and CA. */
export function inCluster(dir = SA_DIR): HostTransport {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT ?? "443";
  if (!host) throw new Error("not running in a cluster (KUBERNETES_SERVICE_HOST is not set)");
  const h = host.includes(":") ? `[${host}]` : host;
  return {
    server: new URL(`https://${h}:${port}`),
    tls: { ca: readFileSync(join(dir, "ca.crt")) },
    async headers() {
      return { Authorization: `Bearer ${readFileSync(join(dir, "token"), "utf8").trim()}` };
    },
  };
}

/** The entry named `name` of a kubeconfig list (clusters, users, contexts), as a JSON object. */
function named(list: unknown, name: unknown, field: string): JsonRecord | undefined {
  if (!Array.isArray(list)) return undefined;
  const entry = list.map(asRecord).find((e) => e?.name === name);
  return asRecord(entry?.[field]);
}

/** The transport of a kubeconfig file's current context. */
export async function fromKubeconfig(path: string): Promise<HostTransport> {
  const doc = asRecord(load(readFileSync(path, "utf8")));
  const base = dirname(path);
  const contextName = doc?.["current-context"];
  const context = named(doc?.contexts, contextName, "context");
  if (!context) throw new Error(`no current context${typeof contextName === "string" ? ` "${contextName}"` : ""}`);
  const cluster = named(doc?.clusters, context.cluster, "cluster");
  const serverText = stringAt(cluster, "server");
  if (!cluster || !serverText) throw new Error(`context "${contextName}" names no cluster with a server`);
  const user = named(doc?.users, context.user, "user") ?? {};
  if (user.exec || user["auth-provider"]) return viaClientNode(path);

  const server = new URL(serverText);
  const tls: HostTransport["tls"] = {};
  const ca = fileOrData(base, cluster["certificate-authority"], cluster["certificate-authority-data"]);
  if (ca) tls.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) tls.rejectUnauthorized = false;
  const serverName = stringAt(cluster, "tls-server-name");
  if (serverName) tls.servername = serverName;
  const cert = fileOrData(base, user["client-certificate"], user["client-certificate-data"]);
  const key = fileOrData(base, user["client-key"], user["client-key-data"]);
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  const tokenFile =
    typeof user.tokenFile === "string"
      ? isAbsolute(user.tokenFile)
        ? user.tokenFile
        : join(base, user.tokenFile)
      : undefined;
  const token = typeof user.token === "string" ? user.token : "";
  const username = typeof user.username === "string" ? user.username : undefined;
  const password = typeof user.password === "string" ? user.password : "";
  return {
    server,
    tls,
    async headers(): Promise<Record<string, string>> {
      if (token) return { Authorization: `Bearer ${token}` };
      if (tokenFile) return { Authorization: `Bearer ${readFileSync(tokenFile, "utf8").trim()}` };
      if (username !== undefined)
        return { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` };
      return {};
    },
  };
}

/**
 * The transport of a kubeconfig's entries already checked to hold inline credentials only (host/inline-kubeconfig.ts
 * safeEntries: a token or a certificate and key, a server with inline trust): nothing is read from disk, nothing run.
 * `server` replaces the entry's address.
 */
export function fromSafeEntries(entries: SafeEntries, server?: URL): HostTransport {
  const { cluster, user } = entries;
  const data = (v: unknown) => (typeof v === "string" && v ? Buffer.from(v, "base64") : undefined);
  const tls: HostTransport["tls"] = {};
  const ca = data(cluster["certificate-authority-data"]);
  if (ca) tls.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) tls.rejectUnauthorized = false;
  if (typeof cluster["tls-server-name"] === "string") tls.servername = cluster["tls-server-name"];
  const cert = data(user["client-certificate-data"]);
  const key = data(user["client-key-data"]);
  if (cert && key) Object.assign(tls, { cert, key });
  const token = typeof user.token === "string" ? user.token : "";
  return {
    server: server ?? new URL(String(cluster.server)),
    tls,
    async headers(): Promise<Record<string, string>> {
      return token ? { Authorization: `Bearer ${token}` } : {};
    },
  };
}

/** Kubeconfigs with credential plugins: client-node's KubeConfig runs them. */
async function viaClientNode(path: string): Promise<HostTransport> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const cluster = kc.getCurrentCluster()!;
  const first: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(first);
  const tls: HostTransport["tls"] = {};
  if (Buffer.isBuffer(first.ca)) tls.ca = first.ca;
  if (Buffer.isBuffer(first.cert)) tls.cert = first.cert;
  if (Buffer.isBuffer(first.key)) tls.key = first.key;
  if (first.rejectUnauthorized !== undefined) tls.rejectUnauthorized = first.rejectUnauthorized;
  if (first.servername !== undefined) tls.servername = first.servername;
  return {
    server: new URL(cluster.server),
    tls,
    async headers() {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === "string") h[k] = v;
      if (opts.auth) h.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
      return h;
    },
  };
}
