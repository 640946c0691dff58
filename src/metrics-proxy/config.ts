// The proxy's flags: the commander program with --help, and their validation into a ProxyConfig.
import { Command, Option } from "commander";
import { wrapHelpToTerminal } from "../util/help-width.js";
import { parseDuration } from "../model/duration.js";
import { UserError } from "../model/errors.js";
import { METRICS_GROUP } from "../kube/resources.js";

export interface ListenAddress {
  /** Host to bind; "" binds every address. */
  host: string;
  port: number;
}

export interface ProxyConfig {
  cluster: string;
  hostNamespace: string;
  /** Path of a kubeconfig; absent means the in-cluster service account. */
  kubeconfig?: string;
  listen: ListenAddress;
  tlsCert?: string;
  tlsKey?: string;
  /** CA of the serving certificate, for the APIService's caBundle. */
  tlsCA?: string;
  clientCA?: string;
  tokenFile?: string;
  /** Kubeconfig of the virtual API server: authentication through its front proxy, authorization by it. */
  virtualKubeconfig?: string;
  /** Replaces the server address of that kubeconfig. */
  virtualServer?: string;
  /** APIService whose caBundle the proxy keeps current; "" leaves it alone. */
  apiService: string;
  /** How long an authorization decision is reused. */
  authzCacheTtlMs: number;
  /** How long a request waits for its authorization decision (queued and sent); past it, 503. */
  authzTimeoutMs: number;
  /** SubjectAccessReviews sent at once, and how many may wait for those; beyond, 503. */
  authzMaxInFlight: number;
  authzMaxQueued: number;
  /** How often the front proxy's CA, the serving files and the APIService are checked. */
  refreshMs: number;
  /** API group the proxy serves. */
  apiGroup: string;
  /** API group of the host metrics API the proxy reads. */
  hostApiGroup: string;
  cacheTtlMs: number;
  nodes: "synced" | "all";
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

export function buildCommand(): Command {
  return wrapHelpToTerminal(new Command("vc-metrics-proxy"))
    .description(
      "Serves a virtual cluster's metrics API (pods and nodes) from the host's metrics API, translated to virtual names and filtered to the cluster.",
    )
    .requiredOption("--cluster <name>", "name of the virtual cluster (value of the vc.orch.io/managed-by label)")
    .requiredOption("--host-namespace <ns>", "host namespace the virtual cluster's pods are synced to")
    .option("--kubeconfig <file>", "kubeconfig of the host (default: in-cluster service account)")
    .option("--listen <addr>", "address to listen on", ":9001")
    .option("--tls-cert <file>", "serving certificate (PEM); with --tls-key serves HTTPS")
    .option("--tls-key <file>", "serving private key (PEM)")
    .option(
      "--tls-ca <file>",
      "CA (PEM) that signed the serving certificate, for the APIService's caBundle (default: the root of the --tls-cert chain)",
    )
    .option(
      "--virtual-kubeconfig <file>",
      "kubeconfig of the virtual API server: trust only its front proxy, authorize each user with it (the deployed form)",
    )
    .option("--virtual-server <url>", "address of the virtual API server, replacing the one in --virtual-kubeconfig")
    .option(
      "--apiservice <name>",
      'APIService in the virtual cluster whose caBundle the proxy keeps equal to its CA ("" to leave it alone) (default: v1beta1.<api-group>)',
    )
    .option(
      "--authz-cache-ttl <duration>",
      "how long an authorization decision of the virtual API server is reused",
      "10s",
    )
    .option(
      "--authz-timeout <duration>",
      "how long a request waits for the virtual API server's authorization decision (503 with Retry-After after)",
      "5s",
    )
    .option("--authz-max-in-flight <n>", "SubjectAccessReviews sent to the virtual API server at once", "16")
    .option("--authz-max-queued <n>", "requests waiting for one of those; more get 503 with Retry-After", "256")
    .option(
      "--refresh-interval <duration>",
      "how often the front proxy's CA, the serving certificate files and the APIService's caBundle are checked",
      "1m",
    )
    .option(
      "--client-ca <file>",
      "without --virtual-kubeconfig: accept client certificates this CA bundle (PEM) signed (needs HTTPS)",
    )
    .option(
      "--token-file <file>",
      "without --virtual-kubeconfig: accept bearer tokens listed in this file (one per line, or the static token CSV)",
    )
    .option(
      "--api-group <group>",
      "API group to serve (metrics.k8s.io makes the proxy a drop-in for the upstream API)",
      METRICS_GROUP,
    )
    .option("--host-api-group <group>", "API group of the host's metrics API", METRICS_GROUP)
    .option("--cache-ttl <duration>", "longest age of cached host metrics", "15s")
    .addOption(
      new Option("--nodes <mode>", "node metrics for the nodes the cluster's pods run on, or for all host nodes")
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

/** Validates parsed options into a ProxyConfig; throws UserError naming the bad flag. */
function toConfig(o: Record<string, string | undefined>): ProxyConfig {
  const cluster = o.cluster!;
  if (!DNS_LABEL.test(cluster))
    throw new UserError(`invalid --cluster "${cluster}": a virtual cluster name is a DNS label`);
  const hostNamespace = o.hostNamespace!;
  if (!DNS_LABEL.test(hostNamespace))
    throw new UserError(`invalid --host-namespace "${hostNamespace}": a namespace is a DNS label`);
  for (const flag of ["apiGroup", "hostApiGroup"] as const) {
    if (!GROUP.test(o[flag]!))
      throw new UserError(
        `invalid --${flag === "apiGroup" ? "api-group" : "host-api-group"} "${o[flag]}": an API group is a DNS subdomain with a dot`,
      );
  }
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey))
    throw new UserError("--tls-cert and --tls-key go together: give both or neither");
  if (o.clientCa && !o.tlsCert) throw new UserError("--client-ca needs HTTPS: give --tls-cert and --tls-key too");
  if (o.tlsCa && !o.tlsCert) throw new UserError("--tls-ca goes with --tls-cert and --tls-key");
  if (o.virtualKubeconfig) {
    if (!o.tlsCert)
      throw new UserError(
        "--virtual-kubeconfig needs HTTPS: the virtual API server's front proxy presents a client certificate; give --tls-cert and --tls-key",
      );
    if (o.clientCa || o.tokenFile)
      throw new UserError(
        "--virtual-kubeconfig authenticates through the virtual API server's front proxy: leave out --client-ca and --token-file",
      );
  }
  if (o.virtualServer !== undefined) {
    if (!o.virtualKubeconfig) throw new UserError("--virtual-server goes with --virtual-kubeconfig");
    let url: URL | undefined;
    try {
      url = new URL(o.virtualServer);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== "https:")
      throw new UserError(
        `invalid --virtual-server "${o.virtualServer}": use an https URL, e.g. https://my-cluster.vc-my-cluster.svc:443`,
      );
  }
  const apiService = o.apiservice ?? `v1beta1.${o.apiGroup}`;
  if (apiService !== "" && !GROUP.test(apiService))
    throw new UserError(`invalid --apiservice "${apiService}": an APIService is named <version>.<group>`);
  const cacheTtlMs = parseDuration(o.cacheTtl!);
  const authzCacheTtlMs = parseDuration(o.authzCacheTtl!);
  const authzTimeoutMs = parseDuration(o.authzTimeout!);
  if (authzTimeoutMs < 1) throw new UserError(`invalid --authz-timeout "${o.authzTimeout}": longer than 0`);
  const count = (flag: string, text: string, min: number): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < min)
      throw new UserError(`invalid ${flag} "${text}": use an integer of at least ${min}`);
    return Number(text);
  };
  const authzMaxInFlight = count("--authz-max-in-flight", o.authzMaxInFlight!, 1);
  const authzMaxQueued = count("--authz-max-queued", o.authzMaxQueued!, 0);
  const refreshMs = parseDuration(o.refreshInterval!);
  if (refreshMs < 1000) throw new UserError(`invalid --refresh-interval "${o.refreshInterval}": at least 1s`);
  const config: ProxyConfig = {
    cluster,
    hostNamespace,
    listen: parseListen(o.listen!),
    apiGroup: o.apiGroup!,
    hostApiGroup: o.hostApiGroup!,
    cacheTtlMs,
    apiService,
    authzCacheTtlMs,
    authzTimeoutMs,
    authzMaxInFlight,
    authzMaxQueued,
    refreshMs,
    nodes: o.nodes as ProxyConfig["nodes"],
    logLevel: o.logLevel as ProxyConfig["logLevel"],
  };
  if (o.kubeconfig) config.kubeconfig = o.kubeconfig;
  if (o.tlsCert) config.tlsCert = o.tlsCert;
  if (o.tlsKey) config.tlsKey = o.tlsKey;
  if (o.tlsCa) config.tlsCA = o.tlsCa;
  if (o.virtualKubeconfig) config.virtualKubeconfig = o.virtualKubeconfig;
  if (o.virtualServer) config.virtualServer = o.virtualServer;
  if (o.clientCa) config.clientCA = o.clientCa;
  if (o.tokenFile) config.tokenFile = o.tokenFile;
  return config;
}

/** Parses argv (without node and script) into a config. Commander errors and --help throw CommanderError. */
export function parseFlags(argv: string[], configure?: (cmd: Command) => void): ProxyConfig {
  const cmd = buildCommand();
  configure?.(cmd);
  cmd.parse(argv, { from: "user" });
  return toConfig(cmd.opts());
}
