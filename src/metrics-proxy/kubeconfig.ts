// Loads how to reach the host: a kubeconfig file or the in-cluster service account, without client-node in the common case.
// client-node costs ~75 MiB of resident memory when imported, so token/certificate kubeconfigs and the in-cluster
// account are read here; kubeconfigs with exec or auth-provider plugins fall back to client-node's KubeConfig.
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { load } from "js-yaml";

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

type Named<T> = Array<{ name: string } & T>;

/** The transport of a kubeconfig file's current context. */
export async function fromKubeconfig(path: string): Promise<HostTransport> {
  const doc = load(readFileSync(path, "utf8")) as any;
  const base = dirname(path);
  const contextName = doc?.["current-context"];
  const context = (doc?.contexts as Named<{ context: any }> | undefined)?.find((c) => c.name === contextName)?.context;
  if (!context) throw new Error(`no current context${contextName ? ` "${contextName}"` : ""}`);
  const cluster = (doc.clusters as Named<{ cluster: any }> | undefined)?.find(
    (c) => c.name === context.cluster,
  )?.cluster;
  if (!cluster?.server) throw new Error(`context "${contextName}" names no cluster with a server`);
  const user = (doc.users as Named<{ user: any }> | undefined)?.find((u) => u.name === context.user)?.user ?? {};
  if (user.exec || user["auth-provider"]) return viaClientNode(path);

  const server = new URL(cluster.server);
  const tls: HostTransport["tls"] = {};
  const ca = fileOrData(base, cluster["certificate-authority"], cluster["certificate-authority-data"]);
  if (ca) tls.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) tls.rejectUnauthorized = false;
  if (cluster["tls-server-name"]) tls.servername = cluster["tls-server-name"];
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
  return {
    server,
    tls,
    async headers(): Promise<Record<string, string>> {
      if (typeof user.token === "string" && user.token) return { Authorization: `Bearer ${user.token}` };
      if (tokenFile) return { Authorization: `Bearer ${readFileSync(tokenFile, "utf8").trim()}` };
      if (user.username !== undefined)
        return { Authorization: `Basic ${Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64")}` };
      return {};
    },
  };
}

/** Kubeconfigs with credential plugins: client-node's KubeConfig runs them. */
async function viaClientNode(path: string): Promise<HostTransport> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const cluster = kc.getCurrentCluster()!;
  const first: Record<string, any> = {};
  await kc.applyToHTTPSOptions(first);
  const tls: HostTransport["tls"] = {};
  for (const k of ["ca", "cert", "key", "rejectUnauthorized", "servername"] as const)
    if (first[k] !== undefined) (tls as any)[k] = first[k];
  return {
    server: new URL(cluster.server),
    tls,
    async headers() {
      const opts: Record<string, any> = {};
      await kc.applyToHTTPSOptions(opts);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === "string") h[k] = v;
      if (opts.auth) h.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
      return h;
    },
  };
}
