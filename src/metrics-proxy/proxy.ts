// Wires the proxy together and runs it: host client, pod informer, cache, auth, metrics and the HTTP(S) server.
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { load } from "js-yaml";
import { UserError } from "../model/errors.js";
import { Authenticator, FrontProxyAuthenticator, readTokenFile, type RequestAuthenticator } from "./auth.js";
import { SubjectAccessReviewer } from "./authorizer.js";
import { TtlCache } from "./cache.js";
import type { ProxyConfig } from "./config.js";
import { HostClient } from "./host-client.js";
import { fromKubeconfig, inCluster, type HostTransport } from "./kubeconfig.js";
import { safeEntries } from "../host/inline-kubeconfig.js";
import type { KubeconfigDoc } from "../host/kubeconfig-file.js";
import { HostSource } from "./host-source.js";
import { PodInformer } from "./informer.js";
import { jsonLogger, type Logger } from "../model/log.js";
import { ProxyMetrics } from "./metrics.js";
import { PodIndex } from "./pod-index.js";
import { PodMetricsJson } from "./serialize.js";
import { requestHandler, type ServerDeps } from "./server.js";
import { readServingMaterial, servingChanged, type ServingMaterial } from "./serving-cert.js";
import { VirtualCluster } from "./virtual-cluster.js";

export interface RunningProxy {
  /** Base URL, e.g. `http://127.0.0.1:9001`. */
  url: string;
  index: PodIndex;
  informer: PodInformer;
  /** The link to the virtual API server (with --virtual-kubeconfig). */
  virtual?: VirtualCluster;
  /** The authorizer asking the virtual API server (with --virtual-kubeconfig). */
  reviewer?: SubjectAccessReviewer;
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

/**
 * The virtual API server's transport: --virtual-kubeconfig, its server replaced by --virtual-server. The file is the
 * host Secret vc-<cluster>, which the cluster's syncer may write: only inline credentials are used from it
 * (host/inline-kubeconfig.ts), never an exec plugin, an auth provider or a file it names (the proxy's own token).
 */
async function virtualTransport(path: string, server: string | undefined): Promise<HostTransport> {
  let transport: HostTransport;
  try {
    safeEntries(load(readFileSync(path, "utf8")) as KubeconfigDoc, `the virtual cluster's kubeconfig ${path}`);
    transport = await fromKubeconfig(path);
  } catch (err) {
    throw new UserError(
      `cannot use the virtual cluster's kubeconfig ${path}: ${err instanceof Error ? err.message : err}`,
    );
  }
  return server ? { ...transport, server: new URL(server) } : transport;
}

/** The host transport: --kubeconfig, else the in-cluster service account. */
async function hostTransport(path: string | undefined): Promise<HostTransport> {
  try {
    return path ? await fromKubeconfig(path) : inCluster();
  } catch (err) {
    const what = path
      ? `the host kubeconfig ${path}`
      : "the in-cluster service account (give --kubeconfig outside a cluster)";
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
  const servingFiles = config.tlsCert
    ? { cert: config.tlsCert, key: config.tlsKey!, ...(config.tlsCA ? { ca: config.tlsCA } : {}) }
    : undefined;
  let serving: ServingMaterial | undefined = servingFiles ? readServingMaterial(servingFiles) : undefined;
  const clientCA = config.clientCA ? read(config.clientCA, "--client-ca") : undefined;
  const virtual = config.virtualKubeconfig
    ? new VirtualCluster(new HostClient(await virtualTransport(config.virtualKubeconfig, config.virtualServer)), {
        log,
        ...(config.apiService ? { apiService: config.apiService } : {}),
      })
    : undefined;

  const index = new PodIndex(config.cluster);
  const metrics = new ProxyMetrics(() => index.size, opts.processMetrics ?? true);
  const client = new HostClient(transport, metrics.observeHost);
  const cache = new TtlCache<unknown>(config.cacheTtlMs, metrics.cacheStats());
  const source = new HostSource(client, cache, config);
  const informer = new PodInformer(client, config.hostNamespace, index, log, opts.retryMs);
  const auth: RequestAuthenticator = virtual
    ? new FrontProxyAuthenticator(() => virtual.requestHeader)
    : new Authenticator({ tokens, clientCertificates: Boolean(clientCA) });
  const reviewer = virtual
    ? new SubjectAccessReviewer(virtual.review, {
        ttlMs: config.authzCacheTtlMs,
        timeoutMs: config.authzTimeoutMs,
        maxInFlight: config.authzMaxInFlight,
        maxQueued: config.authzMaxQueued,
      })
    : undefined;
  const authorize: Pick<ServerDeps, "authorize"> = reviewer
    ? { authorize: (user, attrs) => reviewer.authorize(user, attrs) }
    : {};

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
    ...authorize,
    metrics,
    log,
    readiness() {
      const reasons: string[] = [];
      if (virtual && !virtual.requestHeader)
        reasons.push(
          `front proxy CA not loaded from ${virtual.server}${virtual.lastError ? `: ${virtual.lastError.message}` : ""}`,
        );
      if (!informer.isSynced) reasons.push("pod index not synced");
      if (!informer.isHealthy)
        reasons.push(`host not reachable${informer.lastError ? `: ${informer.lastError.message}` : ""}`);
      return reasons;
    },
  });
  // Client certificates are asked for but checked per request (socket.authorized), so that a request without one gets a
  // 401 Status rather than a failed handshake.
  const clientCertificates = clientCA !== undefined || virtual !== undefined;
  const secureContext = () => ({
    cert: serving!.cert,
    key: serving!.key,
    ...(clientCA ? { ca: clientCA } : virtual?.requestHeader ? { ca: virtual.requestHeader.clientCA } : {}),
  });
  const server = serving
    ? https.createServer(
        { ...secureContext(), ...(clientCertificates ? { requestCert: true, rejectUnauthorized: false } : {}) },
        handler,
      )
    : http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  if (!serving) log.warn("serving plain HTTP: no --tls-cert/--tls-key given; use HTTPS outside of tests");
  if (auth.open) log.warn("authentication is off: no --client-ca or --token-file given; every client can read metrics");

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) =>
      reject(new UserError(`cannot listen on ${config.listen.host}:${config.listen.port}: ${err.message}`)),
    );
    server.listen(config.listen.port, config.listen.host || undefined, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  serverAddress = `${host}:${addr.port}`;
  const connectHost = addr.address === "::" || addr.address === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `${serving ? "https" : "http"}://${connectHost}:${addr.port}`;
  informer.start();

  // With a virtual cluster: load its front proxy's CA (retrying quickly until it is loaded), then check it, the serving
  // files and the APIService's caBundle every --refresh-interval; a change of either CA or the pair renews the TLS context.
  let refreshTimer: NodeJS.Timeout | undefined;
  let refreshing: Promise<unknown> = Promise.resolve();
  let closed = false;
  if (virtual && server instanceof https.Server) {
    const tlsServer = server;
    virtual.onRequestHeaderChange(() => tlsServer.setSecureContext(secureContext()));
    const tick = async () => {
      if (servingFiles) {
        try {
          const next = readServingMaterial(servingFiles);
          if (servingChanged(serving!, next)) {
            serving = next;
            tlsServer.setSecureContext(secureContext());
            log.info("serving certificate reloaded", { cert: servingFiles.cert });
          }
        } catch (err) {
          log.warn("cannot reload the serving certificate; keeping the current one", {
            error: err instanceof Error ? err.message : String(err),
          });
        }
      }
      const ok = await virtual.refresh(serving?.caBundle);
      if (closed) return;
      refreshTimer = setTimeout(
        () => (refreshing = tick()),
        ok ? config.refreshMs : Math.min(config.refreshMs, opts.retryMs ?? 5000),
      );
      refreshTimer.unref();
    };
    refreshing = tick();
  }
  log.info("listening", {
    url,
    cluster: config.cluster,
    hostNamespace: config.hostNamespace,
    host: client.server,
    apiGroup: config.apiGroup,
  });

  return {
    url,
    index,
    informer,
    ...(virtual ? { virtual } : {}),
    ...(reviewer ? { reviewer } : {}),
    metrics,
    cache,
    async close() {
      closed = true;
      clearTimeout(refreshTimer);
      await refreshing;
      await informer.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      client.close();
    },
  };
}
