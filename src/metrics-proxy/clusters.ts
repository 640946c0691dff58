// The clusters the shared proxy answers for, as the host says: the host Namespaces the platform marks (LIST + WATCH by
// the vc.orch.io/metrics-proxy label), and for each its link to its virtual API server (the kubeconfig the control
// plane keeps in the host Secret vc-<cluster>), its front proxy's CAs and its authorizer, refreshed in the background.
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { load } from "js-yaml";
import { safeEntries } from "../host/inline-kubeconfig.js";
import type { KubeconfigDoc } from "../host/kubeconfig-file.js";
import type { Logger } from "../model/log.js";
import { MAX_FAILED, MAX_REASON, type ReplicaStatus } from "../model/proxy-status.js";
import { names } from "../render/meta.js";
import { LABELS } from "../translate/keys.js";
import type { Authentication, RequestAuthenticator } from "./auth.js";
import { SubjectAccessReviewer, type AuthorizerOptions } from "./authorizer.js";
import { frontProxyUser, peerOf, type RequestHeaderConfig } from "./front-proxy.js";
import { HostClient } from "./host-client.js";
import { IssuerIndex, PeerIssuers, type Issuer } from "./issuer.js";
import { asRecord, at, stringAt, type JsonRecord } from "./json.js";
import { fromSafeEntries, type HostTransport } from "./kubeconfig.js";
import { ListWatch, type ListWatchOptions } from "./list-watch.js";
import { scopeKey, type ClusterScope } from "./scope.js";
import { VirtualCluster } from "./virtual-cluster.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Bytes read of a cluster's Secret and of its own proxy's Deployment (the tenant may write the Secret). */
const MAX_OBJECT_BYTES = 1024 * 1024;

/** The virtual API server's address: `{cluster}` and `{namespace}` filled in, or `kubeconfig`: the Secret's own. */
export const DEFAULT_VIRTUAL_SERVER = "https://{cluster}.{namespace}.svc:443";

/** A cluster's own (per-cluster) proxy Deployment, from before the shared proxy: the hand-over waits for it. */
type Legacy = "none" | "quiet" | "active" | "unknown";

export interface RegistryOptions {
  log: Logger;
  /** How often each cluster's link is refreshed. */
  refreshMs: number;
  /** The first retry of a failed refresh (doubling up to refreshMs). */
  retryMs: number;
  /** The APIService of each virtual cluster whose caBundle the proxy keeps ("" leaves them alone). */
  apiService: string;
  /** DEFAULT_VIRTUAL_SERVER's form, or `kubeconfig`. */
  virtualServer: string;
  authz: AuthorizerOptions;
  /** The proxy's serving CA bundle, which each APIService must trust. */
  caBundle(): Buffer | undefined;
  /** Called when the set of trusted front-proxy CAs changed (the TLS context is made again). */
  onTrustChange(): void;
  /** Most clusters answered for (Namespaces beyond are ignored and reported). */
  maxClusters: number;
  /** Refreshes at once (default 8). */
  concurrency?: number;
  listWatch?: ListWatchOptions;
}

/** What the proxy holds of one cluster. */
class ClusterLink {
  virtual: VirtualCluster | undefined;
  reviewer: SubjectAccessReviewer | undefined;
  /** The front proxy's settings last loaded (kept while a refresh fails). */
  requestHeader: RequestHeaderConfig | undefined;
  transportId = "";
  attempted = false;
  queued = false;
  removed = false;
  fails = 0;
  /** Why the last refresh failed; undefined after a good one. */
  failure: string | undefined;
  legacy: Legacy = "none";
  legacyReason = "";
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  constructor(public scope: ClusterScope) {}
  get key(): string {
    return scopeKey(this.scope);
  }
  /** The cluster may be handed over from its own proxy: answered for, its own proxy quiet, the caBundle trusting us. */
  get ready(): boolean {
    return this.requestHeader !== undefined && this.legacy === "quiet" && this.virtual?.caBundleHolds === true;
  }
}

/** The cluster a Namespace marks for the shared proxy, or undefined. */
function scopeOf(ns: JsonRecord): ClusterScope | undefined {
  const hostNamespace = stringAt(ns, "metadata", "name");
  const labels = asRecord(at(ns, "metadata", "labels"));
  const name = labels?.[LABELS.managedBy];
  const mode = labels?.[LABELS.metricsProxy];
  if (!hostNamespace || typeof name !== "string" || !DNS_LABEL.test(name) || typeof mode !== "string") return undefined;
  return { name, hostNamespace, nodes: mode === "all" ? "all" : "synced" };
}

export class ClusterRegistry {
  private readonly links = new Map<string, ClusterLink>();
  /** Host namespace to the key of the cluster it holds. */
  private readonly byNamespace = new Map<string, string>();
  readonly issuers = new IssuerIndex();
  private readonly peers = new PeerIssuers(this.issuers);
  readonly namespaces: ListWatch;
  private readonly queue: ClusterLink[] = [];
  private active = 0;
  private stopped = false;
  private syncedAt: number | undefined;
  private ignored = 0;
  private readonly bySocket = new WeakMap<TLSSocket, { generation: number; issuer: Issuer }>();

  constructor(
    private readonly host: HostClient,
    private readonly opts: RegistryOptions,
  ) {
    this.namespaces = new ListWatch(
      host,
      {
        path: "/api/v1/namespaces",
        labelSelector: LABELS.metricsProxy,
        access: { resource: "namespaces", group: "" },
        rebuild: () => {
          const seen = new Map<string, ClusterScope>();
          return {
            add: (ns) => {
              const scope = scopeOf(ns);
              if (scope) seen.set(scope.hostNamespace, scope);
            },
            commit: () => this.replaceAll(seen),
          };
        },
        apply: (type, ns) => {
          const name = stringAt(ns, "metadata", "name");
          if (!name) return;
          const scope = type === "DELETED" ? undefined : scopeOf(ns);
          if (scope) this.upsert(scope);
          else this.drop(name);
        },
      },
      opts.log,
      opts.listWatch,
    );
  }

  start(): void {
    this.namespaces.start();
  }

  /** True once the Namespaces were listed and every cluster of them was tried once (or a minute went by). */
  get isSynced(): boolean {
    if (!this.namespaces.isSynced) return false;
    this.syncedAt ??= Date.now();
    if (Date.now() - this.syncedAt > 60_000) return true;
    for (const link of this.links.values()) if (!link.attempted) return false;
    return true;
  }

  /** Clusters known, and those answered for. */
  get counts(): { clusters: number; loaded: number } {
    let loaded = 0;
    for (const link of this.links.values()) if (link.requestHeader) loaded++;
    return { clusters: this.links.size, loaded };
  }

  private replaceAll(seen: Map<string, ClusterScope>): void {
    for (const ns of [...this.byNamespace.keys()]) if (!seen.has(ns)) this.drop(ns);
    for (const scope of seen.values()) this.upsert(scope);
  }

  private upsert(scope: ClusterScope): void {
    const key = scopeKey(scope);
    const held = this.byNamespace.get(scope.hostNamespace);
    if (held !== undefined && held !== key) this.drop(scope.hostNamespace);
    const link = this.links.get(key);
    if (link) {
      link.scope = scope;
      return;
    }
    if (this.links.size >= this.opts.maxClusters) {
      if (this.ignored++ === 0)
        this.opts.log.warn("more clusters than --max-clusters: the others are not answered for", {
          maxClusters: this.opts.maxClusters,
        });
      return;
    }
    const added = new ClusterLink(scope);
    this.links.set(key, added);
    this.byNamespace.set(scope.hostNamespace, key);
    this.enqueue(added);
  }

  private drop(hostNamespace: string): void {
    const key = this.byNamespace.get(hostNamespace);
    if (key === undefined) return;
    this.byNamespace.delete(hostNamespace);
    const link = this.links.get(key)!;
    this.links.delete(key);
    link.removed = true;
    clearTimeout(link.timer);
    link.virtual?.close();
    if (this.issuers.remove(key)) this.opts.onTrustChange();
    this.opts.log.info("cluster no longer answered for", { cluster: link.scope.name, hostNamespace });
  }

  private enqueue(link: ClusterLink): void {
    if (link.removed || link.queued || this.stopped) return;
    link.queued = true;
    this.queue.push(link);
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.active < (this.opts.concurrency ?? 8) && this.queue.length > 0) {
      const link = this.queue.shift()!;
      link.queued = false;
      if (link.removed) continue;
      this.active++;
      link.running = this.refresh(link).finally(() => {
        this.active--;
        link.attempted = true;
        link.running = undefined;
        if (!link.removed && !this.stopped) {
          const delay = link.failure
            ? Math.min(this.opts.refreshMs, this.opts.retryMs * 2 ** Math.min(link.fails - 1, 10))
            : this.opts.refreshMs * (0.9 + 0.2 * Math.random());
          link.timer = setTimeout(() => this.enqueue(link), delay);
          link.timer.unref();
        }
        this.pump();
      });
    }
  }

  /** One refresh of a cluster: its kubeconfig, its own proxy's state, its front proxy's CAs, its APIService. */
  private async refresh(link: ClusterLink): Promise<void> {
    try {
      const { transport, id } = await this.transportOf(link.scope);
      if (link.removed) return;
      if (!link.virtual || link.transportId !== id) {
        link.virtual?.close();
        link.virtual = new VirtualCluster(new HostClient(transport, undefined, { maxSockets: 4, idleMs: 30_000 }), {
          log: this.opts.log,
          ...(this.opts.apiService ? { apiService: this.opts.apiService } : {}),
        });
        link.reviewer = new SubjectAccessReviewer(link.virtual.review, this.opts.authz);
        link.transportId = id;
      }
      await this.checkLegacy(link);
      const ok = await link.virtual.refresh(
        this.opts.caBundle(),
        link.legacy === "none" ? "exact" : "contain",
        (config) => {
          if (link.removed) return;
          if (this.issuers.set(link.key, config.clientCA)) this.opts.onTrustChange();
          link.requestHeader = config;
        },
      );
      if (!ok) throw link.virtual.lastError ?? new Error("the virtual API server could not be read");
      link.failure = undefined;
      link.fails = 0;
    } catch (err) {
      link.failure = (err instanceof Error ? err.message : String(err)).slice(0, MAX_REASON);
      link.fails++;
      if (link.fails === 1)
        this.opts.log.warn("cannot answer for a cluster", {
          cluster: link.scope.name,
          hostNamespace: link.scope.hostNamespace,
          error: link.failure,
        });
    }
  }

  /** The transport to a cluster's virtual API server, from its host Secret (inline credentials only). */
  private async transportOf(scope: ClusterScope): Promise<{ transport: HostTransport; id: string }> {
    const secret = names.kubeconfigSecret(scope.name);
    const what = `Secret ${scope.hostNamespace}/${secret}`;
    const res = await this.host.get(
      `/api/v1/namespaces/${encodeURIComponent(scope.hostNamespace)}/secrets/${encodeURIComponent(secret)}`,
      "secrets",
      { maxBytes: MAX_OBJECT_BYTES },
    );
    if (res.status === 404) throw new Error(`${what} does not exist (the control plane writes it)`);
    if (res.status === 403)
      throw new Error(
        `the proxy may not read ${what}: apply the cluster ` +
          `(vc renders the Role ${names.metricsProxyAccess(scope.name)} that lets it)`,
      );
    if (res.status !== 200) throw new Error(`cannot read ${what}: HTTP ${res.status}`);
    const data = stringAt(res.body, "data", "config");
    if (!data) throw new Error(`${what} has no key config`);
    let doc: unknown;
    try {
      doc = load(Buffer.from(data, "base64").toString("utf8"), { maxAliases: 20 });
    } catch (err) {
      throw new Error(`${what} holds no readable kubeconfig: ${err instanceof Error ? err.message : err}`);
    }
    const entries = safeEntries((asRecord(doc) ?? {}) as KubeconfigDoc, `secret ${scope.hostNamespace}/${secret}`);
    const template = this.opts.virtualServer;
    const server =
      template === "kubeconfig"
        ? undefined
        : new URL(template.replaceAll("{cluster}", scope.name).replaceAll("{namespace}", scope.hostNamespace));
    return {
      transport: fromSafeEntries(entries, server),
      id: JSON.stringify([entries.cluster, entries.user, server?.toString() ?? ""]),
    };
  }

  /**
   * The state of the cluster's own proxy Deployment (vc-metrics-proxy-<cluster>, from before the shared proxy):
   * quiet once it is rolled out with `--apiservice ""` (it no longer writes the APIService's caBundle).
   */
  private async checkLegacy(link: ClusterLink): Promise<void> {
    const { scope } = link;
    const name = names.metricsProxy(scope.name);
    const res = await this.host.get(
      `/apis/apps/v1/namespaces/${encodeURIComponent(scope.hostNamespace)}/deployments/${encodeURIComponent(name)}`,
      "deployments",
      { maxBytes: MAX_OBJECT_BYTES },
    );
    if (res.status === 404) {
      link.legacy = "none";
      return;
    }
    if (res.status !== 200) {
      link.legacy = "unknown";
      link.legacyReason = `cannot read its own proxy's Deployment ${name}: HTTP ${res.status}`;
      return;
    }
    const containers = at(res.body, "spec", "template", "spec", "containers");
    const quietArgs =
      Array.isArray(containers) &&
      containers.length > 0 &&
      containers.every((c) => {
        const args = at(c, "args");
        return Array.isArray(args) && leavesApiServiceAlone(args);
      });
    const generation = Number(at(res.body, "metadata", "generation") ?? 0);
    const status = asRecord(at(res.body, "status")) ?? {};
    const replicas = Number(at(res.body, "spec", "replicas") ?? 1);
    const rolledOut =
      Number(status.observedGeneration ?? -1) >= generation &&
      Number(status.updatedReplicas ?? 0) === replicas &&
      Number(status.replicas ?? 0) === replicas;
    link.legacy = quietArgs && rolledOut ? "quiet" : "active";
    link.legacyReason = !quietArgs
      ? `its own proxy's Deployment ${name} still manages the APIService's caBundle ` +
        `(vc renders it with --apiservice "" first)`
      : `its own proxy's Deployment ${name} is rolling out`;
  }

  /** The cluster a request's verified client certificate comes from, or why none (kept per connection). */
  private issuerOf(socket: TLSSocket): Issuer {
    const kept = this.bySocket.get(socket);
    if (kept && kept.generation === this.issuers.generation) return kept.issuer;
    const issuer = this.peers.of(socket);
    this.bySocket.set(socket, { generation: this.issuers.generation, issuer });
    return issuer;
  }

  /** Authentication of the shared proxy: a front proxy's certificate, its cluster by the CA that signed it. */
  authenticator(): RequestAuthenticator {
    return {
      open: false,
      authenticate: (req: IncomingMessage): Authentication => {
        const socket = req.socket as TLSSocket;
        if (typeof socket.getPeerCertificate !== "function") return { ok: false, reason: "not a TLS connection" };
        if (!peerOf(socket).presented) return { ok: false, reason: "no client certificate" };
        if (socket.authorized !== true)
          return {
            ok: false,
            reason:
              "client certificate not signed by a cluster's front-proxy CA " +
              `(${socket.authorizationError ?? "unverified"})`,
          };
        const issuer = this.issuerOf(socket);
        if ("refusal" in issuer) return { ok: false, reason: issuer.refusal };
        const link = this.links.get(issuer.owner);
        if (!link?.requestHeader || !link.reviewer)
          return { ok: false, reason: "the certificate's cluster is no longer answered for" };
        const user = frontProxyUser(req, link.requestHeader);
        if (typeof user === "string") return { ok: false, reason: user };
        const reviewer = link.reviewer;
        return {
          ok: true,
          caller: { scope: link.scope, user, authorize: (u, attrs) => reviewer.authorize(u, attrs) },
        };
      },
    };
  }

  /** What this replica reports (model/proxy-status.ts), but for the time and interval it is written with. */
  report(): Omit<ReplicaStatus, "at" | "intervalSeconds"> {
    const ready: string[] = [];
    const waiting: Record<string, string> = {};
    const failed: [string, string][] = [];
    const contested = this.issuers.contested();
    for (const [key, link] of this.links) {
      const others = contested.get(key);
      const why = others
        ? `its front-proxy CA is published by ${others.join(", ")} too: certificates it signs are refused ` +
          "(give each cluster a CA of its own)"
        : link.requestHeader
          ? link.failure
          : (link.failure ?? "not loaded yet");
      if (why) failed.push([key, why]);
      if (link.legacy === "none") continue;
      if (link.ready && !others) ready.push(key);
      else
        waiting[key] = (
          why ??
          (link.legacy === "quiet"
            ? "the APIService's caBundle does not trust the shared proxy yet"
            : link.legacyReason)
        ).slice(0, MAX_REASON);
    }
    failed.sort((a, b) => (a[0] < b[0] ? -1 : 1));
    return {
      ...this.counts,
      ready: ready.sort(),
      waiting,
      failed: Object.fromEntries(failed.slice(0, MAX_FAILED)),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.namespaces.stop();
    for (const link of this.links.values()) clearTimeout(link.timer);
    await Promise.all([...this.links.values()].map((l) => l.running));
    for (const link of this.links.values()) link.virtual?.close();
  }
}

/** True when a proxy's args say `--apiservice ""` (or `--apiservice=`): it leaves the APIService alone. */
function leavesApiServiceAlone(args: unknown[]): boolean {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--apiservice=") return true;
    if (args[i] === "--apiservice" && args[i + 1] === "") return true;
  }
  return false;
}
