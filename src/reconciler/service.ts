// Assembles a reconciler from its settings: source, target, status store, leader election, HTTP server and loop.
import { defaultCacheRoot } from "../validate/cache-dir.js";
import type { WebhookLimits } from "./webhook-slots.js";
import { UserError } from "../model/errors.js";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { loadGitCredential } from "../git/auth.js";
import { openTarget } from "../sinks/index.js";
import { KubeClient } from "../host/client.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { readClusterHealth } from "../health/read.js";
import type { KubeObject } from "../kube/object.js";
import type { Target } from "../sinks/types.js";
import { defaultEngine } from "../pipeline/engine.js";
import { warningLog } from "./warning-log.js";
import type { Engine } from "../pipeline/engine.js";
import { LeaderElector } from "./leader.js";
import { jsonLogger, type Logger } from "../model/log.js";
import { ReconcileLoop } from "./loop.js";
import { createMetrics, type ReconcilerMetrics } from "./metrics.js";
import { newPassState, runPass, type PassDeps, type PassRequest, type PassResult } from "./pass.js";
import type { ClusterRun } from "./cluster.js";
import { parseListen, startServer, type RunningServer } from "./server.js";
import { observedSource, ReconcilerFleet } from "./fleet-page.js";
import { uiHandler, type UiHandler } from "../ui/server.js";
import { fleetAccess, tokenAuthorizer } from "../ui/auth.js";
import type { Shard } from "./shard.js";
import { FolderSource, GitSource, isRemote, type Source } from "./source.js";

export interface ReconcilerConfig {
  /** Remote URL (http/https) or local folder. */
  repo: string;
  /** Branch or tag of a remote. */
  branch: string;
  /** `kube` or `dir:PATH`. */
  target: string;
  kubeconfig?: string;
  context?: string;
  /** Token or `user:password` file for the remote (else VC_GIT_TOKEN / VC_GIT_USERNAME + VC_GIT_PASSWORD). */
  gitCredentialsFile?: string;
  /** Where remotes are mirrored (default `git` in defaultCacheRoot, outside the checkout). */
  cacheDir?: string;
  intervalMs: number;
  resyncMs: number;
  listen?: string;
  webhookSecretFile?: string;
  /** Bounds of webhook reading (webhook-slots.ts); defaults where absent. */
  webhookLimits?: Partial<WebhookLimits>;
  leaderElect: boolean;
  leaseNamespace?: string;
  identity?: string;
  shard?: Shard;
  allowMassPrune: boolean;
  /** This source's owner name (model/owner.ts); absent: ownership is neither recorded nor checked. */
  owner?: string;
  /** Reconciliations kept per cluster (status-store.ts; default DEFAULT_HISTORY_LIMIT). */
  historyLimit?: number;
  concurrency?: number;
  logger?: Logger;
  /**
   * Where server `Warning` headers go: the reconciler's log (default), or the process sink (stderr, as every vc
   * command: `--once`).
   */
  serverWarnings?: "log" | "process";
  engine?: Engine;
  onCluster?: (run: ClusterRun) => void;
  /**
   * With `reconcileOnce`: each chunk's runs, plans included, before they are let go (the pass keeps summaries only).
   */
  onChunk?: (runs: ClusterRun[]) => void;
  onPass?: ConstructorParameters<typeof ReconcileLoop>[1]["onPass"];
}

/** The source of a `--repo` value: a mirrored remote or a local folder. */
/** The default --cache-dir: `git` under vc's cache root ($XDG_CACHE_HOME/vc or ~/.cache/vc). */
const defaultGitCache = (): string => join(defaultCacheRoot(), "git");

export function openSource(cfg: Pick<ReconcilerConfig, "repo" | "branch" | "gitCredentialsFile" | "cacheDir">): Source {
  if (!isRemote(cfg.repo)) return new FolderSource(cfg.repo);
  const key = createHash("sha256").update(`${cfg.repo}#${cfg.branch}`).digest("hex").slice(0, 16);
  const dir = join(resolve(cfg.cacheDir ?? defaultGitCache()), key);
  return new GitSource({
    url: cfg.repo,
    dir,
    ref: cfg.branch,
    credential: loadGitCredential({ file: cfg.gitCredentialsFile }),
  });
}

export interface Reconciler {
  deps: PassDeps;
  metrics: ReconcilerMetrics;
  loop: ReconcileLoop;
  elector?: LeaderElector;
  server?: RunningServer;
  /** The fleet page's view of this reconciler, when it listens. */
  fleet?: ReconcilerFleet;
  close(): Promise<void>;
}

interface Assembled {
  deps: PassDeps;
  target: Target;
  elector?: LeaderElector;
  /** Set by the loop's owner: called when leadership changes. */
  hooks: { onLeading: (leading: boolean) => void; onPush: () => void };
}

async function assemble(cfg: ReconcilerConfig, metrics: ReconcilerMetrics): Promise<Assembled> {
  const hooks = { onLeading: (_leading: boolean): void => {}, onPush: (): void => {} };
  const logger = cfg.logger ?? jsonLogger();
  const source = openSource(cfg);
  // Server warnings go to this reconciler's log (its own clients' sink), never to stderr nor to another run's log.
  const onWarning = cfg.serverWarnings === "process" ? undefined : warningLog(logger);
  const target = await openTarget(cfg.target, { kubeconfig: cfg.kubeconfig, context: cfg.context, onWarning });
  target.tell = (message) => logger.warn(message);
  // The reconciler reads and writes this source's records (records/store.ts), in its own namespace unless told
  // otherwise.
  if (target instanceof KubeTarget) target.source = cfg.owner ?? "";
  let elector: LeaderElector | undefined;
  if (cfg.leaderElect) {
    const client =
      target instanceof KubeTarget
        ? target.client
        : KubeClient.open({ kubeconfig: cfg.kubeconfig, context: cfg.context, onWarning });
    elector = new LeaderElector({
      client,
      namespace: cfg.leaseNamespace ?? process.env.POD_NAMESPACE ?? "vc-system",
      name:
        cfg.shard && cfg.shard.count > 1
          ? `vc-reconciler-shard-${cfg.shard.index}-of-${cfg.shard.count}`
          : "vc-reconciler",
      identity: cfg.identity ?? process.env.POD_NAME ?? hostname(),
      logger,
      onChange: (leading) => {
        metrics.leader.set(leading ? 1 : 0);
        hooks.onLeading(leading);
      },
      onPush: () => hooks.onPush(),
    });
  }
  if (elector && target instanceof KubeTarget) {
    // Every write is fenced by the Lease (not sent past its renew deadline), and a cluster's apply lease taken by
    // another replica of this Lease is void while this one leads (that replica may write no more).
    const leader = elector;
    target.fence = () => leader.writeDeadline();
    target.records.leader = leader.holder;
    target.records.leading = () => leader.isLeader;
  }
  const deps: PassDeps = {
    // No validation cache on disk: a folder's record keeps the digest of its validation (validate/digest.ts), which a
    // new pod's index takes; each chunk validates its folders once.
    engine: cfg.engine ?? defaultEngine,
    target,
    store: target.statusStore({ historyLimit: cfg.historyLimit }),
    allowMassPrune: cfg.allowMassPrune,
    owner: cfg.owner,
    mayWrite: elector ? () => elector.isLeader : () => true,
    ...(target instanceof KubeTarget
      ? { health: (ns: string, desired: readonly KubeObject[]) => readClusterHealth(target.client, ns, desired) }
      : {}),
    source,
    logger,
    metrics,
    shard: cfg.shard,
    concurrency: cfg.concurrency,
    onCluster: cfg.onCluster,
  };
  return { deps, target, elector, hooks };
}

/**
 * How long a stopping reconciler may take to finish the clusters in hand before it exits anyway: within the
 * Deployment's terminationGracePeriodSeconds (60, deploy/reconciler/deployment.yaml), before the kubelet's SIGKILL.
 */
export const SHUTDOWN_DEADLINE_MS = 50_000;

/** One full pass and done (`vc reconcile --once`). */
export async function reconcileOnce(cfg: ReconcilerConfig): Promise<PassResult> {
  const metrics = createMetrics({ defaults: false });
  const { deps, target } = await assemble({ ...cfg, leaderElect: false }, metrics);
  // Summaries only: each chunk's plans go to onChunk (printed as the pass goes), then are let go.
  deps.onChunk = cfg.onChunk;
  try {
    return await runPass(deps, newPassState(), { kind: "full" });
  } finally {
    await target.close();
  }
}

/**
 * The webhook secret: the file's content or $VC_WEBHOOK_SECRET, trimmed. A blank one is an error, never the key ""
 * (with which anyone could sign).
 */
export function webhookSecret(file: string | undefined): string | undefined {
  const raw = file !== undefined ? readFileSync(file, "utf8") : process.env.VC_WEBHOOK_SECRET;
  if (raw === undefined) return undefined;
  const secret = raw.trim();
  if (secret === "") {
    throw new UserError(
      file !== undefined
        ? `webhook secret file ${file} is empty: put the secret of the webhook in it`
        : "VC_WEBHOOK_SECRET is set but blank: set it to the secret of the webhook, or unset it",
    );
  }
  return secret;
}

/** Starts the long-running reconciler: loop, optional leader election and HTTP server. */
export async function startReconciler(cfg: ReconcilerConfig): Promise<Reconciler> {
  const metrics = createMetrics();
  const { deps, target, elector, hooks } = await assemble(cfg, metrics);
  // The fleet page reads what the loop keeps; it is told of each sync, pass and settled cluster.
  const fleet = cfg.listen
    ? new ReconcilerFleet({
        target: target.description,
        ...(target instanceof KubeTarget ? { client: target.client } : {}),
      })
    : undefined;
  if (fleet) {
    deps.source = observedSource(deps.source, (s) => fleet.onSync(s));
    const onCluster = deps.onCluster;
    deps.onCluster = (run) => {
      fleet.onCluster(run);
      onCluster?.(run);
    };
  }
  const loop = new ReconcileLoop(deps, {
    intervalMs: cfg.intervalMs,
    resyncMs: cfg.resyncMs,
    watch: !isRemote(cfg.repo),
    onPass: (r) => {
      updateResultGauge(metrics, loop);
      fleet?.onPass(r);
      cfg.onPass?.(r);
    },
    ...(fleet ? { onPassStart: (req: PassRequest) => fleet.onPassStart(req) } : {}),
  });
  fleet?.attach(loop);
  let server: RunningServer | undefined;
  if (cfg.listen) {
    const secret = webhookSecret(cfg.webhookSecretFile);
    server = await startServer(cfg.listen, {
      registry: metrics.registry,
      ready: () => loop.ready || (elector !== undefined && !elector.isLeader),
      healthy: () => loop.healthy,
      webhookSecret: secret,
      webhookLimits: cfg.webhookLimits,
      ref: cfg.branch,
      onPush: (commit) => {
        if (!elector || elector.isLeader) return loop.trigger({ kind: "incremental" });
        // A standby got the webhook (the Service picks any ready replica): hand it to the leader through the Lease.
        elector
          .notifyPush(commit)
          .catch((err: Error) => deps.logger.warn("cannot hand the push to the leader", { error: err.message }));
      },
      logger: deps.logger,
      ...(fleet ? { ui: fleetPage(fleet, target, cfg.listen, deps.logger) } : {}),
    });
    deps.logger.info("listening", { url: server.url });
  }
  if (elector) {
    hooks.onLeading = (leading) => {
      if (leading) loop.trigger({ kind: "full" });
    };
    hooks.onPush = () => loop.trigger({ kind: "incremental" });
    elector.start();
  }
  await loop.start();
  const watch = !isRemote(cfg.repo) ? await deps.source.watchMode?.() : undefined;
  deps.logger.info("reconciler started", {
    source: deps.source.description,
    target: target.description,
    owner: cfg.owner,
    shard: cfg.shard,
    leaderElect: !!elector,
    ...(watch && { watch }),
  });
  return {
    deps,
    metrics,
    loop,
    elector,
    server,
    ...(fleet ? { fleet } : {}),
    async close() {
      await loop.stop();
      await elector?.stop();
      await server?.close();
      fleet?.close();
      await target.close();
    },
  };
}

/**
 * The fleet page of a listening reconciler: on a host, every API request needs a bearer token the host's TokenReview
 * accepts and whose user may list vc's records (SubjectAccessReview); on a dir: target there is no host to ask, so
 * the page is served only on a loopback address.
 */
function fleetPage(fleet: ReconcilerFleet, target: Target, listen: string, logger: Logger): UiHandler | undefined {
  if (target instanceof KubeTarget)
    return uiHandler({
      provider: fleet,
      authorize: tokenAuthorizer(target.client, fleetAccess(target.records.namespace)),
    });
  const { host } = parseListen(listen);
  if (host === "127.0.0.1" || host === "::1" || host === "localhost") return uiHandler({ provider: fleet });
  logger.info("the fleet page is not served: a dir: target has no host to check tokens with; listen on 127.0.0.1");
  return undefined;
}

function updateResultGauge(metrics: ReconcilerMetrics, loop: ReconcileLoop): void {
  const counts = new Map<string, number>();
  for (const s of loop.state.statuses.values()) if (s.result) counts.set(s.result, (counts.get(s.result) ?? 0) + 1);
  metrics.clustersByResult.reset();
  for (const [result, n] of counts) metrics.clustersByResult.set({ result }, n);
}
