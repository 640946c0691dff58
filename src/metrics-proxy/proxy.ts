// Wires the proxy together and runs it: host client, pod informer, cache, auth, metrics and the HTTP(S) server.
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { UserError } from "../errors.js";
import { Authenticator, readTokenFile } from "./auth.js";
import { TtlCache } from "./cache.js";
import type { ProxyConfig } from "./config.js";
import { HostClient } from "./host-client.js";
import { fromKubeconfig, inCluster, type HostTransport } from "./kubeconfig.js";
import { HostSource } from "./host-source.js";
import { PodInformer } from "./informer.js";
import { jsonLogger, type Logger } from "../log.js";
import { ProxyMetrics } from "./metrics.js";
import { PodIndex } from "./pod-index.js";
import { PodMetricsJson } from "./serialize.js";
import { requestHandler } from "./server.js";

export interface RunningProxy {
  /** Base URL, e.g. `http://127.0.0.1:9001`. */
  url: string;
  index: PodIndex;
  informer: PodInformer;
  metrics: ProxyMetrics;
  cache: TtlCache<unknown>;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** Register Node.js process metrics (default true; tests running many proxies turn it off). */
  processMetrics?: boolean;
  /** How long a request waits for the first pod LIST (default 5 s). */
  syncWaitMs?: number;
  /** Delay before retrying a failed host LIST (default 1 s). */
  retryMs?: number;
}

/** The host transport: --kubeconfig, else the in-cluster service account. */
async function hostTransport(path: string | undefined): Promise<HostTransport> {
  try {
    return path ? await fromKubeconfig(path) : inCluster();
  } catch (err) {
    const what = path ? `the host kubeconfig ${path}` : "the in-cluster service account (give --kubeconfig outside a cluster)";
    throw new UserError(`cannot use ${what}: ${err instanceof Error ? err.message : err}`);
  }
}

function read(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UserError(`cannot read ${flag} ${path}: ${err instanceof Error ? err.message : err}`);
  }
}

/** Starts a proxy for `config`; resolves once it listens (the pod index fills in the background). */
export async function startProxy(config: ProxyConfig, opts: StartOptions = {}): Promise<RunningProxy> {
  const log = opts.log ?? jsonLogger({ min: config.logLevel });
  const transport = await hostTransport(config.kubeconfig);
  let tokens: string[] | undefined;
  if (config.tokenFile) {
    try {
      tokens = readTokenFile(config.tokenFile);
    } catch (err) {
      throw new UserError(`cannot use --token-file: ${err instanceof Error ? err.message : err}`);
    }
  }
  const tls = config.tlsCert ? { cert: read(config.tlsCert, "--tls-cert"), key: read(config.tlsKey!, "--tls-key") } : undefined;
  const clientCA = config.clientCA ? read(config.clientCA, "--client-ca") : undefined;

  const index = new PodIndex(config.cluster);
  const metrics = new ProxyMetrics(() => index.size, opts.processMetrics ?? true);
  const client = new HostClient(transport, metrics.observeHost);
  const cache = new TtlCache<unknown>(config.cacheTtlMs, metrics.cacheStats());
  const source = new HostSource(client, cache, config);
  const informer = new PodInformer(client, config.hostNamespace, index, log, opts.retryMs);
  const auth = new Authenticator({ tokens, clientCertificates: Boolean(clientCA) });

  let serverAddress = "";
  const handler = requestHandler({
    ctx: {
      apiGroup: config.apiGroup,
      nodes: config.nodes,
      index,
      informer,
      source,
      syncWaitMs: opts.syncWaitMs ?? 5000,
      podJson: new PodMetricsJson(`${config.apiGroup}/v1beta1`),
      get serverAddress() {
        return serverAddress;
      },
    },
    auth,
    metrics,
    log,
    readiness() {
      const reasons: string[] = [];
      if (!informer.isSynced) reasons.push("pod index not synced");
      if (!informer.isHealthy) reasons.push(`host not reachable${informer.lastError ? `: ${informer.lastError.message}` : ""}`);
      return reasons;
    },
  });
  const server = tls
    ? https.createServer({ ...tls, ...(clientCA ? { ca: clientCA, requestCert: true, rejectUnauthorized: false } : {}) }, handler)
    : http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  if (!tls) log.warn("serving plain HTTP: no --tls-cert/--tls-key given; use HTTPS outside of tests");
  if (auth.open) log.warn("authentication is off: no --client-ca or --token-file given; every client can read metrics");

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(new UserError(`cannot listen on ${config.listen.host}:${config.listen.port}: ${err.message}`)));
    server.listen(config.listen.port, config.listen.host || undefined, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  serverAddress = `${host}:${addr.port}`;
  const connectHost = addr.address === "::" || addr.address === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `${tls ? "https" : "http"}://${connectHost}:${addr.port}`;
  informer.start();
  log.info("listening", { url, cluster: config.cluster, hostNamespace: config.hostNamespace, host: client.server, apiGroup: config.apiGroup });

  return {
    url,
    index,
    informer,
    metrics,
    cache,
    async close() {
      await informer.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      client.close();
    },
  };
}
