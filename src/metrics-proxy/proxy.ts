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
import { requestHandler } from "./server.js";
import { readServingMaterial, servingChanged, type ServingFiles, type ServingMaterial } from "./serving-cert.js";
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

/** The credentials a request may carry, read from the flags: the virtual cluster's link or static ones. */
interface Credentials {
  auth: RequestAuthenticator;
  virtual?: VirtualCluster;
  reviewer?: SubjectAccessReviewer;
  /** PEM of the CA that signs accepted client certificates (--client-ca). */
  clientCA?: Buffer;
}

/** Phase 1: how requests are authenticated and authorized (the virtual API server's front proxy, or static files). */
async function openCredentials(config: ProxyConfig, log: Logger): Promise<Credentials> {
  let tokens: string[] | undefined;
  if (config.tokenFile) {
    try {
      tokens = readTokenFile(config.tokenFile);
    } catch (err) {
      throw new UserError(`cannot use --token-file: ${err instanceof Error ? err.message : err}`);
    }
  }
  const clientCA = config.clientCA ? read(config.clientCA, "--client-ca") : undefined;
  if (!config.virtualKubeconfig)
    return {
      auth: new Authenticator({ tokens, clientCertificates: Boolean(clientCA) }),
      ...(clientCA ? { clientCA } : {}),
    };
  const virtual = new VirtualCluster(
    new HostClient(await virtualTransport(config.virtualKubeconfig, config.virtualServer)),
    { log, ...(config.apiService ? { apiService: config.apiService } : {}) },
  );
  const reviewer = new SubjectAccessReviewer(virtual.review, {
    ttlMs: config.authzCacheTtlMs,
    timeoutMs: config.authzTimeoutMs,
    maxInFlight: config.authzMaxInFlight,
    maxQueued: config.authzMaxQueued,
  });
  return { auth: new FrontProxyAuthenticator(() => virtual.requestHeader), virtual, reviewer };
}

/** What the data path is made of: the host client, the pod index and its informer, the cache and the metrics. */
interface DataPath {
  client: HostClient;
  index: PodIndex;
  informer: PodInformer;
  cache: TtlCache<unknown>;
  source: HostSource;
  metrics: ProxyMetrics;
}

/** Phase 2: the host side, from the host transport to the index and the cached host reads. */
function openDataPath(config: ProxyConfig, transport: HostTransport, log: Logger, opts: StartOptions): DataPath {
  const index = new PodIndex(config.cluster);
  const metrics = new ProxyMetrics(() => index.size, opts.processMetrics ?? true);
  const client = new HostClient(transport, metrics.observeHost);
  const cache = new TtlCache<unknown>(config.cacheTtlMs, metrics.cacheStats());
  const source = new HostSource(client, cache, config);
  const informer = new PodInformer(client, config.hostNamespace, index, log, opts.retryMs);
  return { client, index, informer, cache, source, metrics };
}

/** Why the proxy is not ready (empty when it is): the front proxy's CA, the pod index, the host. */
function readinessOf(credentials: Credentials, data: DataPath): () => string[] {
  const { virtual } = credentials;
  const { informer } = data;
  return () => {
    const reasons: string[] = [];
    if (virtual && !virtual.requestHeader)
      reasons.push(
        `front proxy CA not loaded from ${virtual.server}${virtual.lastError ? `: ${virtual.lastError.message}` : ""}`,
      );
    if (!informer.isSynced) reasons.push("pod index not synced");
    if (!informer.isHealthy)
      reasons.push(`host not reachable${informer.lastError ? `: ${informer.lastError.message}` : ""}`);
    return reasons;
  };
}

/** The serving side: the HTTP(S) server and how its TLS context is made again when a CA or the serving pair changes. */
interface Serving {
  server: http.Server | https.Server;
  /** The serving files, when HTTPS. */
  files?: ServingFiles;
  /** The serving pair and CA bundle in use. */
  material?: ServingMaterial;
  /** Makes the TLS context again from the current material and CAs. */
  renew(): void;
}

/** Phase 3: the server answering requests (HTTPS with the serving files, asking for client certificates when needed). */
function openServer(
  config: ProxyConfig,
  credentials: Credentials,
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  log: Logger,
): Serving {
  const files: ServingFiles | undefined = config.tlsCert
    ? { cert: config.tlsCert, key: config.tlsKey!, ...(config.tlsCA ? { ca: config.tlsCA } : {}) }
    : undefined;
  const { clientCA, virtual } = credentials;
  if (!files) {
    log.warn("serving plain HTTP: no --tls-cert/--tls-key given; use HTTPS outside of tests");
    const server = http.createServer(handler);
    server.keepAliveTimeout = 65_000;
    return { server, renew() {} };
  }
  let material = readServingMaterial(files);
  const secureContext = () => ({
    cert: material.cert,
    key: material.key,
    ...(clientCA ? { ca: clientCA } : virtual?.requestHeader ? { ca: virtual.requestHeader.clientCA } : {}),
  });
  // Client certificates are asked for but checked per request (socket.authorized), so that a request without one gets
  // a 401 Status rather than a failed handshake.
  const clientCertificates = clientCA !== undefined || virtual !== undefined;
  const server = https.createServer(
    { ...secureContext(), ...(clientCertificates ? { requestCert: true, rejectUnauthorized: false } : {}) },
    handler,
  );
  server.keepAliveTimeout = 65_000;
  return {
    server,
    files,
    get material() {
      return material;
    },
    set material(next: ServingMaterial) {
      material = next;
    },
    renew: () => server.setSecureContext(secureContext()),
  };
}

/** Phase 4: listens on --listen; resolves with the address to report and the URL to reach the proxy at. */
async function listen(config: ProxyConfig, serving: Serving): Promise<{ address: string; url: string }> {
  const { server } = serving;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) =>
      reject(new UserError(`cannot listen on ${config.listen.host}:${config.listen.port}: ${err.message}`)),
    );
    server.listen(config.listen.port, config.listen.host || undefined, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const connectHost = addr.address === "::" || addr.address === "0.0.0.0" ? "127.0.0.1" : host;
  return {
    address: `${host}:${addr.port}`,
    url: `${serving.files ? "https" : "http"}://${connectHost}:${addr.port}`,
  };
}

/** A background loop that can be stopped, waiting for its round in hand. */
interface Loop {
  stop(): Promise<void>;
}

/**
 * Phase 5 (with a virtual cluster): loads its front proxy's CA (retrying quickly until it is loaded), then checks it,
 * the serving files and the APIService's caBundle every --refresh-interval; a change of either CA or of the pair
 * renews the TLS context.
 */
function startRefresh(config: ProxyConfig, virtual: VirtualCluster, serving: Serving, log: Logger, retryMs?: number) {
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> = Promise.resolve();
  let closed = false;
  virtual.onRequestHeaderChange(() => serving.renew());
  const tick = async () => {
    if (serving.files) reloadServing(serving, log);
    const ok = await virtual.refresh(serving.material?.caBundle);
    if (closed) return;
    timer = setTimeout(() => (round = tick()), ok ? config.refreshMs : Math.min(config.refreshMs, retryMs ?? 5000));
    timer.unref();
  };
  round = tick();
  return {
    async stop() {
      closed = true;
      clearTimeout(timer);
      await round;
    },
  } satisfies Loop;
}

/** Reads the serving files again and renews the TLS context when they changed; a broken reading keeps the current. */
function reloadServing(serving: Serving, log: Logger): void {
  try {
    const next = readServingMaterial(serving.files!);
    if (serving.material && !servingChanged(serving.material, next)) return;
    serving.material = next;
    serving.renew();
    log.info("serving certificate reloaded", { cert: serving.files!.cert });
  } catch (err) {
    log.warn("cannot reload the serving certificate; keeping the current one", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Starts a proxy for `config`; resolves once it listens (the pod index fills in the background). */
export async function startProxy(config: ProxyConfig, opts: StartOptions = {}): Promise<RunningProxy> {
  const log = opts.log ?? jsonLogger({ min: config.logLevel });
  const transport = await hostTransport(config.kubeconfig);
  const credentials = await openCredentials(config, log);
  const data = openDataPath(config, transport, log, opts);
  const { virtual, reviewer, auth } = credentials;
  let serverAddress = "";
  const handler = requestHandler({
    ctx: {
      apiGroup: config.apiGroup,
      nodes: config.nodes,
      index: data.index,
      informer: data.informer,
      source: data.source,
      syncWaitMs: opts.syncWaitMs ?? 5000,
      podJson: new PodMetricsJson(`${config.apiGroup}/v1beta1`),
      get serverAddress() {
        return serverAddress;
      },
    },
    auth,
    ...(reviewer ? { authorize: (user, attrs) => reviewer.authorize(user, attrs) } : {}),
    metrics: data.metrics,
    log,
    readiness: readinessOf(credentials, data),
  });
  const serving = openServer(config, credentials, handler, log);
  if (auth.open) log.warn("authentication is off: no --client-ca or --token-file given; every client can read metrics");
  const { address, url } = await listen(config, serving);
  serverAddress = address;
  data.informer.start();
  const refresh = virtual && serving.files ? startRefresh(config, virtual, serving, log, opts.retryMs) : undefined;
  log.info("listening", {
    url,
    cluster: config.cluster,
    hostNamespace: config.hostNamespace,
    host: data.client.server,
    apiGroup: config.apiGroup,
  });

  return {
    url,
    index: data.index,
    informer: data.informer,
    ...(virtual ? { virtual } : {}),
    ...(reviewer ? { reviewer } : {}),
    metrics: data.metrics,
    cache: data.cache,
    async close() {
      await refresh?.stop();
      await data.informer.stop();
      await new Promise<void>((resolve) => {
        serving.server.close(() => resolve());
        serving.server.closeAllConnections();
      });
      data.client.close();
    },
  };
}
