// Wires the proxy together and runs it: host client, pod index and its informer, cache, the clusters it answers for
// and how it authenticates their callers, metrics, and the HTTP(S) server.
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
import { podInformer } from "./informer.js";
import type { ListWatch } from "./list-watch.js";
import { ClusterRegistry } from "./clusters.js";
import type { SingleCluster } from "./config.js";
import { startStatusReport } from "./status-report.js";
import type { ClusterScope } from "./scope.js";
import { jsonLogger, type Logger } from "../model/log.js";
import { ProxyMetrics } from "./metrics.js";
import { DEFAULT_INDEX_BOUNDS, PodIndex } from "./pod-index.js";
import { PodMetricsJson } from "./serialize.js";
import { requestHandler } from "./server.js";
import { readServingMaterial, servingChanged, type ServingFiles, type ServingMaterial } from "./serving-cert.js";
import { VirtualCluster } from "./virtual-cluster.js";

export interface RunningProxy {
  /** Base URL, e.g. `http://127.0.0.1:9001`. */
  url: string;
  index: PodIndex;
  informer: ListWatch;
  /** The clusters the shared proxy answers for (without --cluster). */
  registry?: ClusterRegistry;
  /** The link to the virtual API server (with --cluster and --virtual-kubeconfig). */
  virtual?: VirtualCluster;
  /** The authorizer asking the virtual API server (with --cluster and --virtual-kubeconfig). */
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
  /** How long close() lets requests in hand finish before it cuts their connections (default 5 s). */
  closeGraceMs?: number;
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

/** What the data path is made of: the host client, the pod index and its informer, the cache and the metrics. */
interface DataPath {
  client: HostClient;
  index: PodIndex;
  informer: ListWatch;
  cache: TtlCache<unknown>;
  source: HostSource;
  metrics: ProxyMetrics;
}

/** Phase 1: the host side, from the host transport to the index and the cached host reads. */
function openDataPath(config: ProxyConfig, transport: HostTransport, log: Logger, opts: StartOptions): DataPath {
  const index = new PodIndex({
    maxPods: config.maxPods,
    maxPodsPerNamespace: config.maxPodsPerNamespace,
    maxLabelBytes: DEFAULT_INDEX_BOUNDS.maxLabelBytes,
  });
  const metrics = new ProxyMetrics(() => index.size, opts.processMetrics ?? true);
  const client = new HostClient(transport, metrics.observeHost);
  const cache = new TtlCache<unknown>(config.cacheTtlMs, metrics.cacheStats());
  const source = new HostSource(client, cache, config);
  const single = config.mode.kind === "single" ? config.mode.single : undefined;
  const selection = single
    ? { kind: "cluster" as const, cluster: single.cluster, hostNamespace: single.hostNamespace }
    : { kind: "host" as const };
  const informer = podInformer(client, selection, index, log, { retryMs: opts.retryMs ?? 1000 });
  return { client, index, informer, cache, source, metrics };
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

/** How callers are told apart and let in, and what runs in the background for it. */
interface Credentials {
  auth: RequestAuthenticator;
  /** The CAs client certificates are verified with (undefined: none are asked for). */
  clientCAs?: () => Array<string | Buffer>;
  registry?: ClusterRegistry;
  virtual?: VirtualCluster;
  reviewer?: SubjectAccessReviewer;
  /** Why requests cannot be authenticated yet (empty when they can). */
  readiness(): string[];
  /** Starts what keeps the credentials current, once the server listens. */
  start(serving: Serving): Loop;
}

/** A background loop that can be stopped, waiting for its round in hand. */
interface Loop {
  stop(): Promise<void>;
}

/** Phase 2, a proxy of one cluster: its virtual API server's front proxy, or static tokens and client CA. */
async function singleCredentials(
  config: ProxyConfig,
  single: SingleCluster,
  log: Logger,
  opts: StartOptions,
): Promise<Credentials> {
  const scope: ClusterScope = { name: single.cluster, hostNamespace: single.hostNamespace, nodes: single.nodes };
  let tokens: string[] | undefined;
  if (single.tokenFile) {
    try {
      tokens = readTokenFile(single.tokenFile);
    } catch (err) {
      throw new UserError(`cannot use --token-file: ${err instanceof Error ? err.message : err}`);
    }
  }
  const clientCA = single.clientCA ? read(single.clientCA, "--client-ca") : undefined;
  if (!single.virtualKubeconfig)
    return {
      auth: new Authenticator(scope, { tokens, clientCertificates: Boolean(clientCA) }),
      ...(clientCA ? { clientCAs: () => [clientCA] } : {}),
      readiness: () => [],
      start: (serving: Serving) => startServingReload(config, serving, log),
    } satisfies Credentials;
  const virtual = new VirtualCluster(
    new HostClient(await virtualTransport(single.virtualKubeconfig, single.virtualServer)),
    { log, ...(config.apiService ? { apiService: config.apiService } : {}) },
  );
  const reviewer = new SubjectAccessReviewer(virtual.review, authzOptions(config));
  return {
    auth: new FrontProxyAuthenticator(
      scope,
      () => virtual.requestHeader,
      (user, attrs) => reviewer.authorize(user, attrs),
    ),
    clientCAs: () => (virtual.requestHeader ? [virtual.requestHeader.clientCA] : []),
    virtual,
    reviewer,
    readiness: () =>
      virtual.requestHeader
        ? []
        : [
            `front proxy CA not loaded from ${virtual.server}` +
              (virtual.lastError ? `: ${virtual.lastError.message}` : ""),
          ],
    start: (serving: Serving) => startRefresh(config, virtual, serving, log, opts.retryMs),
  } satisfies Credentials;
}

function authzOptions(config: ProxyConfig) {
  return {
    ttlMs: config.authzCacheTtlMs,
    timeoutMs: config.authzTimeoutMs,
    maxInFlight: config.authzMaxInFlight,
    maxQueued: config.authzMaxQueued,
  };
}

/** Phase 2, the shared proxy: every cluster the host marks, each told apart by its front proxy's CA. */
function sharedCredentials(config: ProxyConfig, data: DataPath, log: Logger, opts: StartOptions): Credentials {
  let serving: Serving | undefined;
  let renewing: NodeJS.Timeout | undefined;
  const registry = new ClusterRegistry(data.client, {
    log,
    refreshMs: config.refreshMs,
    retryMs: opts.retryMs ?? 1000,
    apiService: config.apiService,
    virtualServer: config.mode.kind === "shared" ? config.mode.shared.virtualServer : "",
    authz: { ...authzOptions(config), maxEntries: 1000 },
    caBundle: () => serving?.material?.caBundle,
    // Making the TLS context costs in the number of CAs: the clusters loaded at start go into it together, once
    // they are all loaded (the proxy is not ready before); later changes at once.
    onTrustChange: () => {
      if (registry.isSynced && !renewing) return serving?.renew();
      const once = () => {
        if (!registry.isSynced) return void (renewing = setTimeout(once, 200));
        renewing = undefined;
        serving?.renew();
      };
      renewing ??= setTimeout(once, 200);
    },
    maxClusters: config.mode.kind === "shared" ? config.mode.shared.maxClusters : 0,
  });
  return {
    auth: registry.authenticator(),
    clientCAs: () => registry.issuers.pems(),
    registry,
    readiness: () => (registry.isSynced && !renewing ? [] : ["the clusters to answer for are not loaded yet"]),
    start(s) {
      serving = s;
      registry.start();
      const reload = startServingReload(config, s, log);
      const shared = config.mode.kind === "shared" ? config.mode.shared : undefined;
      const report = shared?.statusConfigMap
        ? startStatusReport(data.client, {
            configMap: shared.statusConfigMap,
            replica: shared.replica,
            intervalMs: config.refreshMs,
            report: () => {
              const overBound = data.index.overBound();
              return {
                ...registry.report(),
                ...(overBound.size > 0 ? { overBound: Object.fromEntries(overBound) } : {}),
              };
            },
            ready: () => registry.isSynced,
            log,
          })
        : undefined;
      return {
        async stop() {
          clearTimeout(renewing);
          await report?.stop();
          await reload.stop();
          await registry.stop();
        },
      };
    },
  };
}

/** Why the proxy is not ready (empty when it is): the clusters' or front proxy's CAs, the pod index, the host. */
function readinessOf(credentials: Credentials, data: DataPath): () => string[] {
  const { informer } = data;
  return () => {
    const reasons = credentials.readiness();
    if (!informer.isSynced) reasons.push("pod index not synced");
    if (!informer.isHealthy)
      reasons.push(`host not reachable${informer.lastError ? `: ${informer.lastError.message}` : ""}`);
    return reasons;
  };
}

/**
 * Phase 3: the server answering requests (HTTPS with the serving files, asking for client certificates when needed).
 */
function openServer(
  config: ProxyConfig,
  credentials: Credentials,
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  log: Logger,
): Serving {
  const files: ServingFiles | undefined = config.tlsCert
    ? { cert: config.tlsCert, key: config.tlsKey!, ...(config.tlsCA ? { ca: config.tlsCA } : {}) }
    : undefined;
  if (!files) {
    log.warn("serving plain HTTP: no --tls-cert/--tls-key given; use HTTPS outside of tests");
    const server = http.createServer(handler);
    server.keepAliveTimeout = 65_000;
    return { server, renew() {} };
  }
  let material = readServingMaterial(files);
  const { clientCAs } = credentials;
  // An empty list trusts nothing (no list at all would trust the public roots).
  const secureContext = () => ({ cert: material.cert, key: material.key, ...(clientCAs ? { ca: clientCAs() } : {}) });
  // Client certificates are asked for but checked per request (socket.authorized), so that a request without one gets
  // a 401 Status rather than a failed handshake.
  const server = https.createServer(
    { ...secureContext(), ...(clientCAs ? { requestCert: true, rejectUnauthorized: false } : {}) },
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

/**
 * Phase 5 (one cluster with its virtual API server): loads its front proxy's CA (retrying quickly until it is loaded),
 * then checks it, the serving files and the APIService's caBundle every --refresh-interval; a change of either CA or
 * of the pair renews the TLS context.
 */
function startRefresh(
  config: ProxyConfig,
  virtual: VirtualCluster,
  serving: Serving,
  log: Logger,
  retryMs?: number,
): Loop {
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
  };
}

/** Phase 5 (otherwise): checks the serving files every --refresh-interval. */
function startServingReload(config: ProxyConfig, serving: Serving, log: Logger): Loop {
  if (!serving.files) return { stop: async () => {} };
  const timer = setInterval(() => reloadServing(serving, log), config.refreshMs);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
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

/** Starts a proxy for `config`; resolves once it listens (the pod index and the clusters load in the background). */
export async function startProxy(config: ProxyConfig, opts: StartOptions = {}): Promise<RunningProxy> {
  const log = opts.log ?? jsonLogger({ min: config.logLevel });
  const data = openDataPath(config, await hostTransport(config.kubeconfig), log, opts);
  const credentials: Credentials =
    config.mode.kind === "single"
      ? await singleCredentials(config, config.mode.single, log, opts)
      : sharedCredentials(config, data, log, opts);
  let serverAddress = "";
  const handler = requestHandler({
    ctx: {
      apiGroup: config.apiGroup,
      index: data.index,
      informer: data.informer,
      source: data.source,
      syncWaitMs: opts.syncWaitMs ?? 5000,
      podJson: new PodMetricsJson(`${config.apiGroup}/v1beta1`),
      get serverAddress() {
        return serverAddress;
      },
    },
    auth: credentials.auth,
    metrics: data.metrics,
    log,
    readiness: readinessOf(credentials, data),
  });
  const serving = openServer(config, credentials, handler, log);
  if (credentials.auth.open)
    log.warn("authentication is off: no --client-ca or --token-file given; every client can read metrics");
  const { address, url } = await listen(config, serving);
  serverAddress = address;
  data.informer.start();
  const background = credentials.start(serving);
  const single = config.mode.kind === "single" ? config.mode.single : undefined;
  log.info("listening", {
    url,
    ...(single ? { cluster: single.cluster, hostNamespace: single.hostNamespace } : { clusters: "shared" }),
    host: data.client.server,
    apiGroup: config.apiGroup,
  });

  return {
    url,
    index: data.index,
    informer: data.informer,
    ...(credentials.registry ? { registry: credentials.registry } : {}),
    ...(credentials.virtual ? { virtual: credentials.virtual } : {}),
    ...(credentials.reviewer ? { reviewer: credentials.reviewer } : {}),
    metrics: data.metrics,
    cache: data.cache,
    async close() {
      await background.stop();
      await data.informer.stop();
      // Requests in hand are answered (idle connections close at once), those left after the grace are cut.
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => serving.server.closeAllConnections(), opts.closeGraceMs ?? 5_000);
        serving.server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        serving.server.closeIdleConnections();
      });
      credentials.virtual?.close();
      data.client.close();
    },
  };
}
