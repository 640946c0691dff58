// The proxy's flags: the commander program with --help, and their validation into a ProxyConfig.
import { Command, Option } from "commander";
import { hostname } from "node:os";
import { wrapHelpToTerminal } from "../util/help-width.js";
import { parseDuration } from "../model/duration.js";
import { UserError } from "../model/errors.js";
import { METRICS_GROUP } from "../kube/resources.js";
import { SHARED_METRICS_PROXY } from "../translate/metrics-proxy.js";
import { DEFAULT_VIRTUAL_SERVER } from "./clusters.js";
import { DEFAULT_INDEX_BOUNDS } from "./pod-index.js";

export interface ListenAddress {
  /** Host to bind; "" binds every address. */
  host: string;
  port: number;
}

/** The proxy of one cluster (`--cluster`): its own deployable of earlier releases, and a standalone proxy. */
export interface SingleCluster {
  cluster: string;
  hostNamespace: string;
  nodes: "synced" | "all";
  clientCA?: string;
  tokenFile?: string;
  /** Kubeconfig of the virtual API server: authentication through its front proxy, authorization by it. */
  virtualKubeconfig?: string;
  /** Replaces the server address of that kubeconfig. */
  virtualServer?: string;
}

/** The shared proxy (no `--cluster`): every cluster the host's Namespaces mark, told apart by its front proxy's CA. */
interface SharedClusters {
  /** The virtual API servers' address: `{cluster}` and `{namespace}` filled in, or `kubeconfig`. */
  virtualServer: string;
  /** Where replicas publish what they answer for; undefined: nowhere. */
  statusConfigMap?: { namespace: string; name: string };
  /** This replica's key in it. */
  replica: string;
  maxClusters: number;
}

export interface ProxyConfig {
  /** The shared proxy's clusters, or the one cluster of a single proxy. */
  mode: { kind: "shared"; shared: SharedClusters } | { kind: "single"; single: SingleCluster };
  /** Path of a kubeconfig; absent means the in-cluster service account. */
  kubeconfig?: string;
  listen: ListenAddress;
  tlsCert?: string;
  tlsKey?: string;
  /** CA of the serving certificate, for the APIService's caBundle. */
  tlsCA?: string;
  /** APIService whose caBundle the proxy keeps current; "" leaves it alone. */
  apiService: string;
  /** How long an authorization decision is reused. */
  authzCacheTtlMs: number;
  /** How long a request waits for its authorization decision (queued and sent); past it, 503. */
  authzTimeoutMs: number;
  /** SubjectAccessReviews sent at once (per cluster), and how many may wait for those; beyond, 503. */
  authzMaxInFlight: number;
  authzMaxQueued: number;
  /** How often the front proxies' CAs, the serving files and the APIServices are checked. */
  refreshMs: number;
  /** API group the proxy serves. */
  apiGroup: string;
  /** API group of the host metrics API the proxy reads. */
  hostApiGroup: string;
  cacheTtlMs: number;
  /** Bounds of the pod index (tenants create pods). */
  maxPods: number;
  maxPodsPerNamespace: number;
  logLevel: "debug" | "info" | "warn" | "error";
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/** Parses `:9001`, `0.0.0.0:9001`, `127.0.0.1:0`, `[::1]:9001`, `localhost:9001`. */
export function parseListen(text: string): ListenAddress {
  const m = /^(\[[^\]]+\]|[^:\s]*):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new UserError(`invalid --listen "${text}": use HOST:PORT or :PORT, e.g. :9001`);
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

const STATUS_DEFAULT = `${SHARED_METRICS_PROXY.namespace}/${SHARED_METRICS_PROXY.statusConfigMap}`;

export function buildCommand(): Command {
  return wrapHelpToTerminal(new Command("vc-metrics-proxy"))
    .description(
      "Serves the metrics API (pods and nodes) of every virtual cluster of the host from the host's metrics API, " +
        "translated to virtual names and filtered to the cluster that asks; with --cluster, of that one cluster.",
    )
    .option("--kubeconfig <file>", "kubeconfig of the host (default: in-cluster service account)")
    .option("--listen <addr>", "address to listen on", ":9001")
    .option("--tls-cert <file>", "serving certificate (PEM); with --tls-key serves HTTPS")
    .option("--tls-key <file>", "serving private key (PEM)")
    .option(
      "--tls-ca <file>",
      "CA (PEM) that signed the serving certificate, for the APIServices' caBundle " +
        "(default: the root of the --tls-cert chain)",
    )
    .option(
      "--virtual-server <url>",
      "the virtual API servers' address, {cluster} and {namespace} filled in, or 'kubeconfig' for the address of " +
        `each cluster's kubeconfig (default ${DEFAULT_VIRTUAL_SERVER}); with --virtual-kubeconfig: that server's URL`,
    )
    .option(
      "--status-configmap <ns/name>",
      `ConfigMap in which this replica publishes which clusters it answers for ("" for none)`,
      STATUS_DEFAULT,
    )
    .option("--replica-name <name>", "this replica's key in that ConfigMap (default: $POD_NAME, else the host name)")
    .option("--max-clusters <n>", "most clusters answered for", "10000")
    .option("--max-pods <n>", "most pods in the index", String(DEFAULT_INDEX_BOUNDS.maxPods))
    .option(
      "--max-pods-per-namespace <n>",
      "most pods of one host namespace in the index (a tenant creates pods)",
      String(DEFAULT_INDEX_BOUNDS.maxPodsPerNamespace),
    )
    .option(
      "--apiservice <name>",
      "APIService in each virtual cluster whose caBundle the proxy keeps trusting its CA " +
        '("" to leave it alone) (default: v1beta1.<api-group>)',
    )
    .option(
      "--authz-cache-ttl <duration>",
      "how long an authorization decision of a virtual API server is reused",
      "10s",
    )
    .option(
      "--authz-timeout <duration>",
      "how long a request waits for the virtual API server's authorization decision (503 with Retry-After after)",
      "5s",
    )
    .option("--authz-max-in-flight <n>", "SubjectAccessReviews sent to one virtual API server at once", "16")
    .option("--authz-max-queued <n>", "requests of one cluster waiting for one of those; more get 503", "256")
    .option(
      "--refresh-interval <duration>",
      "how often each cluster's front-proxy CA and APIService caBundle, and the serving certificate files, are checked",
      "1m",
    )
    .option(
      "--api-group <group>",
      "API group to serve (metrics.k8s.io makes the proxy a drop-in for the upstream API)",
      METRICS_GROUP,
    )
    .option("--host-api-group <group>", "API group of the host's metrics API", METRICS_GROUP)
    .option("--cache-ttl <duration>", "longest age of cached host metrics", "15s")
    .option("--cluster <name>", "serve this one virtual cluster only (value of its vc.orch.io/managed-by label)")
    .option("--host-namespace <ns>", "with --cluster: the host namespace its pods are synced to")
    .option(
      "--virtual-kubeconfig <file>",
      "with --cluster: kubeconfig of its virtual API server; trust only its front proxy, authorize each user with it",
    )
    .option(
      "--client-ca <file>",
      "with --cluster, without --virtual-kubeconfig: accept client certificates this CA bundle signed (needs HTTPS)",
    )
    .option(
      "--token-file <file>",
      "with --cluster, without --virtual-kubeconfig: accept bearer tokens listed in this file " +
        "(one per line, or the static token CSV)",
    )
    .addOption(
      new Option(
        "--nodes <mode>",
        "with --cluster: node metrics for the nodes the cluster's pods run on, or for all host nodes",
      )
        .choices(["synced", "all"])
        .default("synced"),
    )
    .addOption(
      new Option("--log-level <level>", "lowest level of JSON log lines")
        .choices(["debug", "info", "warn", "error"])
        .default("info"),
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
}

function count(flag: string, text: string, min: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min)
    throw new UserError(`invalid ${flag} "${text}": use an integer of at least ${min}`);
  return Number(text);
}

function httpsUrl(flag: string, text: string): void {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== "https:")
    throw new UserError(`invalid ${flag} "${text}": use an https URL, e.g. https://my-cluster.vc-my-cluster.svc:443`);
}

/** The one cluster of `--cluster`, checked. */
function singleCluster(o: Record<string, string | undefined>): SingleCluster {
  const cluster = o.cluster!;
  if (!DNS_LABEL.test(cluster))
    throw new UserError(`invalid --cluster "${cluster}": a virtual cluster name is a DNS label`);
  const hostNamespace = o.hostNamespace;
  if (hostNamespace === undefined) throw new UserError("--cluster needs --host-namespace: where its pods are synced");
  if (!DNS_LABEL.test(hostNamespace))
    throw new UserError(`invalid --host-namespace "${hostNamespace}": a namespace is a DNS label`);
  if (o.clientCa && !o.tlsCert) throw new UserError("--client-ca needs HTTPS: give --tls-cert and --tls-key too");
  if (o.virtualKubeconfig) {
    if (!o.tlsCert)
      throw new UserError(
        "--virtual-kubeconfig needs HTTPS: the virtual API server's front proxy presents a client certificate; " +
          "give --tls-cert and --tls-key",
      );
    if (o.clientCa || o.tokenFile)
      throw new UserError(
        "--virtual-kubeconfig authenticates through the virtual API server's front proxy: " +
          "leave out --client-ca and --token-file",
      );
  }
  if (o.virtualServer !== undefined) {
    if (!o.virtualKubeconfig) throw new UserError("with --cluster, --virtual-server goes with --virtual-kubeconfig");
    httpsUrl("--virtual-server", o.virtualServer);
  }
  const single: SingleCluster = { cluster, hostNamespace, nodes: o.nodes as SingleCluster["nodes"] };
  if (o.virtualKubeconfig) single.virtualKubeconfig = o.virtualKubeconfig;
  if (o.virtualServer) single.virtualServer = o.virtualServer;
  if (o.clientCa) single.clientCA = o.clientCa;
  if (o.tokenFile) single.tokenFile = o.tokenFile;
  return single;
}

/** The shared proxy's settings, checked. */
function sharedClusters(o: Record<string, string | undefined>, source: (flag: string) => string | undefined) {
  for (const flag of ["hostNamespace", "virtualKubeconfig", "clientCa", "tokenFile"] as const)
    if (o[flag] !== undefined)
      throw new UserError(`--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} goes with --cluster`);
  if (source("nodes") === "cli")
    throw new UserError("--nodes goes with --cluster: the shared proxy reads each cluster's from its Namespace");
  if (!o.tlsCert)
    throw new UserError(
      "the shared proxy needs HTTPS: the virtual API servers' front proxies present client certificates; " +
        "give --tls-cert and --tls-key (or --cluster for a proxy of one cluster)",
    );
  const virtualServer = o.virtualServer ?? DEFAULT_VIRTUAL_SERVER;
  if (virtualServer !== "kubeconfig") {
    if (!virtualServer.includes("{cluster}") && !virtualServer.includes("{namespace}"))
      throw new UserError(
        `invalid --virtual-server "${virtualServer}": name each cluster's address with {cluster} and {namespace}, ` +
          `e.g. ${DEFAULT_VIRTUAL_SERVER}, or say kubeconfig`,
      );
    httpsUrl("--virtual-server", virtualServer.replaceAll("{cluster}", "c").replaceAll("{namespace}", "n"));
  }
  const shared: SharedClusters = {
    virtualServer,
    replica: o.replicaName || process.env.POD_NAME || hostname(),
    maxClusters: count("--max-clusters", o.maxClusters!, 1),
  };
  const status = o.statusConfigmap!;
  if (status !== "") {
    const [namespace, name, extra] = status.split("/");
    if (!namespace || !name || extra !== undefined || !DNS_LABEL.test(namespace) || !/^[a-z0-9.-]+$/.test(name))
      throw new UserError(`invalid --status-configmap "${status}": use NAMESPACE/NAME, or "" for none`);
    shared.statusConfigMap = { namespace, name };
  }
  return shared;
}

/** Validates parsed options into a ProxyConfig; throws UserError naming the bad flag. */
function toConfig(o: Record<string, string | undefined>, source: (flag: string) => string | undefined): ProxyConfig {
  for (const flag of ["apiGroup", "hostApiGroup"] as const) {
    if (!GROUP.test(o[flag]!))
      throw new UserError(
        `invalid --${flag === "apiGroup" ? "api-group" : "host-api-group"} "${o[flag]}": ` +
          "an API group is a DNS subdomain with a dot",
      );
  }
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey))
    throw new UserError("--tls-cert and --tls-key go together: give both or neither");
  if (o.tlsCa && !o.tlsCert) throw new UserError("--tls-ca goes with --tls-cert and --tls-key");
  const mode: ProxyConfig["mode"] =
    o.cluster !== undefined
      ? { kind: "single", single: singleCluster(o) }
      : { kind: "shared", shared: sharedClusters(o, source) };
  const apiService = o.apiservice ?? `v1beta1.${o.apiGroup}`;
  if (apiService !== "" && !GROUP.test(apiService))
    throw new UserError(`invalid --apiservice "${apiService}": an APIService is named <version>.<group>`);
  const authzTimeoutMs = parseDuration(o.authzTimeout!);
  if (authzTimeoutMs < 1) throw new UserError(`invalid --authz-timeout "${o.authzTimeout}": longer than 0`);
  const refreshMs = parseDuration(o.refreshInterval!);
  if (refreshMs < 1000) throw new UserError(`invalid --refresh-interval "${o.refreshInterval}": at least 1s`);
  const config: ProxyConfig = {
    mode,
    listen: parseListen(o.listen!),
    apiGroup: o.apiGroup!,
    hostApiGroup: o.hostApiGroup!,
    cacheTtlMs: parseDuration(o.cacheTtl!),
    apiService,
    authzCacheTtlMs: parseDuration(o.authzCacheTtl!),
    authzTimeoutMs,
    authzMaxInFlight: count("--authz-max-in-flight", o.authzMaxInFlight!, 1),
    authzMaxQueued: count("--authz-max-queued", o.authzMaxQueued!, 0),
    refreshMs,
    maxPods: count("--max-pods", o.maxPods!, 1),
    maxPodsPerNamespace: count("--max-pods-per-namespace", o.maxPodsPerNamespace!, 1),
    logLevel: o.logLevel as ProxyConfig["logLevel"],
  };
  if (o.kubeconfig) config.kubeconfig = o.kubeconfig;
  if (o.tlsCert) config.tlsCert = o.tlsCert;
  if (o.tlsKey) config.tlsKey = o.tlsKey;
  if (o.tlsCa) config.tlsCA = o.tlsCa;
  return config;
}

/** Parses argv (without node and script) into a config. Commander errors and --help throw CommanderError. */
export function parseFlags(argv: string[], configure?: (cmd: Command) => void): ProxyConfig {
  const cmd = buildCommand();
  configure?.(cmd);
  cmd.parse(argv, { from: "user" });
  return toConfig(cmd.opts(), (flag) => cmd.getOptionValueSource(flag));
}
