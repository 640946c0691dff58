// One reconcile pass: sync the source, pick the clusters (changed paths or everything), reconcile each, keep status.
import { existsSync, lstatSync, readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { defaultHostNamespace } from "../model/cluster.js";
import { HEALTH_STATUSES } from "../model/health.js";
import type { Logger } from "../model/log.js";
import { INVENTORY_CHUNK } from "../pipeline/chunks.js";
import { passClaims } from "./claims.js";
import type { LoadedCluster } from "../pipeline/engine.js";
import { applyFleet } from "../pipeline/fleet.js";
import { loadDesiredIndex, type DesiredIndex } from "../pipeline/load.js";
import type { ClusterStatus } from "../records/status.js";
import type { ValidatedFolder } from "../validate/digest.js";
import { clustersReachedBy } from "../repo/fleet-base.js";
import { newRolloutMemory, rolloutForPass, type PassRollout, type RolloutMemory } from "../rollout/driver.js";
import type { Target } from "../sinks/types.js";
import { affectedClusters, CLUSTERS_DIR } from "./affected.js";
import { settleOutcome, type ClusterContext, type ClusterRun } from "./cluster.js";
import type { ReconcilerMetrics } from "./metrics.js";
import { inShard, type Shard } from "./shard.js";
import type { Snapshot, Source } from "./source.js";
import { forCluster } from "./warning-log.js";

export type PassRequest =
  /** Every cluster of the repository, plus clusters known on the host whose folder is gone. */
  | { kind: "full" }
  /**
   * The clusters touched since the last pass (changed paths between revisions, plus `paths` from a watcher). `from`:
   * count the changes from this revision instead, the one a full pass in hand follows (changes run between its chunks,
   * before any pass has completed too); such a pass never turns into a full one, and leaves `lastRevision` as it is.
   */
  | { kind: "incremental"; paths?: string[]; from?: string };

export interface PassResult {
  revision: string;
  kind: "full" | "incremental";
  /** Clusters considered (in this replica's shard). */
  clusters: ClusterRun[];
  /** Clusters whose result is invalid or failed. */
  problems: number;
  durationMs: number;
  /** The reconciler began stopping during the pass: clusters not yet started were left for the next start. */
  interrupted?: boolean;
  /**
   * An incremental pass `from` a revision could not list what changed since (the source no longer knows it): only the
   * watcher's paths and the clusters to retry were reconciled, and a full pass is due.
   */
  uncounted?: boolean;
}

export interface PassState {
  /** The revision of the last completed pass: where changed paths are counted from. */
  lastRevision?: string;
  /** Last status of each cluster of this replica. */
  statuses: Map<string, ClusterStatus>;
  /** Clusters whose last run failed (API errors): retried by the next pass. */
  retry: Set<string>;
  /** What passes keep of rollouts (src/rollout/driver.ts); `active` makes the loop tick. */
  rollout?: RolloutMemory;
}

export interface PassDeps extends ClusterContext {
  source: Source;
  logger: Logger;
  metrics?: ReconcilerMetrics;
  shard?: Shard;
  /** Clusters reconciled at once (default 4). */
  concurrency?: number;
  /** Called as each cluster finishes (the CLI prints plans with it). */
  onCluster?: (run: ClusterRun) => void;
  /**
   * Keep each cluster's plan and per-object results in the pass result (`vc reconcile --once -o json`, tests).
   * The long-running loop drops them once a cluster is settled: a fleet's plans are most of a pass's memory.
   */
  keepPlans?: boolean;
  /** Clusters per chunk of a full pass (default INVENTORY_CHUNK): loaded, listed, reconciled and let go together. */
  chunkSize?: number;
  /**
   * Called with each chunk's runs (sorted by cluster, plans still held) before they are let go: --once prints as it
   * goes.
   */
  onChunk?: (runs: ClusterRun[]) => void;
  /**
   * Called between the chunks of a full pass with the revision it follows: work that must not wait for the pass (a
   * commit's changed clusters, an incremental pass `from` that revision) runs here. Returns that pass, whose revision
   * the rest of the full pass follows, skipping the clusters it reconciled; undefined when none ran.
   */
  betweenChunks?: (revision: string) => Promise<PassResult | undefined>;
  /** True while a change waits for betweenChunks: a full pass runs it between two clusters, not at its chunk's end. */
  pending?: () => boolean;
  /**
   * True once the reconciler is stopping: no further cluster is started; those in hand finish and record their status.
   */
  stopping?: () => boolean;
  /** Where rollouts materialise base snapshots (default: a private folder of the process). */
  basesDir?: string;
}

export function newPassState(): PassState {
  return { statuses: new Map(), retry: new Set() };
}

/** The pass's rollout (src/rollout/driver.ts): only the first shard's replica drives it; undefined on a dir: target. */
async function passRollout(
  deps: PassDeps,
  state: PassState,
  snap: Snapshot,
  folders: () => string[],
  kind: "full" | "incremental",
): Promise<PassRollout | undefined> {
  state.rollout ??= newRolloutMemory();
  return rolloutForPass(
    { ...deps, drives: !deps.shard || deps.shard.index === 0, sharded: (deps.shard?.count ?? 1) > 1 },
    state.rollout,
    snap.root,
    snap.revision,
    state.statuses,
    folders,
    kind,
  );
}

/** Syncs the source (errors propagate: the caller backs off) and reconciles what the request selects. */
export async function runPass(deps: PassDeps, state: PassState, req: PassRequest): Promise<PassResult> {
  const started = Date.now();
  const snap = await timedSync(deps);
  let kind = req.kind;
  let names: string[] | undefined;
  const nested = req.kind === "incremental" && req.from !== undefined;
  let uncounted = false;
  if (req.kind === "incremental") {
    const from = req.from ?? state.lastRevision;
    let changed = from === undefined ? undefined : await deps.source.changes(from, snap.revision);
    // Inside a full pass, a change that cannot be counted is never a second full pass: the watcher's paths go now, and
    // the rest waits for the full pass the loop asks for next (uncounted).
    if (changed === undefined && nested) {
      uncounted = true;
      changed = [];
    }
    if (changed === undefined) kind = "full";
    else
      names = [
        ...new Set([
          ...affectedClusters([...changed, ...(req.paths ?? [])], CLUSTERS_DIR, (f) =>
            clustersReachedBy(snap.root, f, clusterFolders(snap.root)),
          ),
          ...state.retry,
        ]),
      ].sort();
  }
  // The records are read once per pass (a full pass: once per chunk) and kept up to date with its own writes
  // (records/store.ts).
  deps.target.startUnit?.({ fleet: kind === "full", forgetClaims: true });
  try {
    if (kind === "full") return await fullPass(deps, state, snap, started);
    const res = await incrementalPass(deps, state, snap, started, names ?? [], nested);
    if (uncounted) res.uncounted = true;
    return res;
  } finally {
    deps.target.endUnit?.();
  }
}

async function incrementalPass(
  deps: PassDeps,
  state: PassState,
  snap: Snapshot,
  started: number,
  changed: string[],
  nested: boolean,
): Promise<PassResult> {
  // A rollout adds the clusters it moves (and those in flight) and pins each cluster to its base (src/rollout/).
  const rollout = await passRollout(deps, state, snap, () => clusterFolders(snap.root), "incremental");
  const names = [...new Set([...changed, ...(rollout?.extra ?? [])])].sort().filter((n) => inShard(n, deps.shard));
  const present = names.filter((n) => hasFiles(join(snap.root, CLUSTERS_DIR, n)));
  const removed = names.filter((n) => !present.includes(n));
  const index =
    present.length > 0
      ? await loadDesiredIndex(snap.root, snap.revision, { clusters: present, engine: deps.engine })
      : emptyIndex(snap);
  await migrate(
    deps,
    present.map((c) => ({ cluster: c, hostNamespace: index.state.known.get(c)! })),
  );
  // Each cluster's status is read before it is reconciled (a GET each), so that a run-time suspension is seen.
  const prev = new Map<string, ClusterStatus | undefined>();
  for (const name of names)
    prev.set(
      name,
      await knownStatus(
        deps,
        state,
        name,
        index.state.known.get(name) ?? state.statuses.get(name)?.hostNamespace ?? defaultHostNamespace(name),
      ),
    );
  const runs = await reconcile(deps, state, snap, index, {
    names: present,
    removed,
    prev,
    rollout,
    full: false,
    peers: passClaims(index.folders, statuses(prev)),
  });
  return done(state, snap, "incremental", runs.runs, started, runs.interrupted, nested);
}

/**
 * A full pass, streamed: the shard is indexed once in summary (validity and host namespace, no spec), then run through
 * the pipeline chunk by chunk (load -> validate -> render -> plan -> apply -> let go), so memory follows the chunk, not
 * the fleet. Between chunks, pending changes run first (betweenChunks) and a stop request ends the pass.
 */
async function fullPass(deps: PassDeps, state: PassState, snap: Snapshot, started: number): Promise<PassResult> {
  const folders = clusterFolders(snap.root);
  const mine = folders.filter((n) => inShard(n, deps.shard));
  // The records first (one LIST): a folder whose digest matches what its record kept is not validated again in the
  // index (its record's summary is taken; the rules across clusters still run; every chunk is rendered and planned).
  const listed = await listStatuses(deps);
  const index =
    mine.length > 0
      ? await loadDesiredIndex(snap.root, snap.revision, {
          clusters: mine,
          engine: deps.engine,
          validated: validatedFolders(deps, listed ?? []),
        })
      : emptyIndex(snap);
  deps.logger.info("shard indexed", {
    folders: index.folders.length,
    fromRecords: index.folders.filter((c) => c.recorded).length,
  });
  const hostNamespaces = new Map<string, string>();
  for (const c of index.folders) {
    const ns = validNamespace(c);
    if (ns !== undefined) hostNamespaces.set(c.name, ns);
  }
  await migrate(deps, await legacyOf(deps.target));
  if (listed) keepStatuses(deps, state, listed, hostNamespaces);
  // The rollout is read and stepped once the statuses (each cluster's pinned base) are known; the summary index above
  // is of the newest base (validity and host namespaces), each chunk is loaded at its clusters' pins.
  const rollout = await passRollout(deps, state, snap, () => folders, "full");
  const gone = new Set([...(await deps.target.clusterNames()), ...state.statuses.keys()]);
  for (const n of folders) gone.delete(n);
  const removed = [...gone].filter((n) => inShard(n, deps.shard)).sort();
  // Public host claims of the whole pass, decided before any write (chunks and concurrent syncs see the same claims).
  const runs = await reconcile(deps, state, snap, index, {
    names: mine,
    removed,
    prev: state.statuses,
    rollout,
    full: true,
    peers: passClaims(index.folders, state.statuses),
  });
  return done(state, snap, "full", runs.runs, started, runs.interrupted);
}

/** An index of no folder (a pass with nothing of the repository to load). */
function emptyIndex(snap: Snapshot): DesiredIndex {
  return {
    state: { root: snap.root, revision: snap.revision, clusters: [], errors: [], known: new Map(), missing: [] },
    valid: [],
    claims: new Map(),
    contested: [],
    hosts: new Map(),
    suspended: new Set(),
    folders: [],
  };
}

/** The statuses of a map that may hold none for a cluster. */
function statuses(prev: ReadonlyMap<string, ClusterStatus | undefined>): Map<string, ClusterStatus> {
  return new Map([...prev].filter((e): e is [string, ClusterStatus] => e[1] !== undefined));
}

/**
 * The named clusters (and the removed ones) through the pipeline's one driver: a chunk at a time, a few clusters at
 * once, each outcome settled on its record as it ends (health, status). `prev`: each cluster's last status.
 */
async function reconcile(
  deps: PassDeps,
  state: PassState,
  first: Snapshot,
  index: DesiredIndex,
  run: {
    names: string[];
    removed: string[];
    prev: ReadonlyMap<string, ClusterStatus | undefined>;
    rollout?: PassRollout;
    full: boolean;
    peers: ReadonlyMap<string, readonly string[]>;
  },
): Promise<{ runs: ClusterRun[]; interrupted: boolean }> {
  let snap = first;
  const runs: ClusterRun[] = [];
  const chunk: ClusterRun[] = [];
  // Clusters that passes run between this full pass's chunks reconciled, and the revision they are reconciled at.
  const between = new Map<string, string>();
  const suspendedAtRunTime = new Map<string, string>();
  for (const [cluster, s] of run.prev) if (s?.suspendedBy) suspendedAtRunTime.set(cluster, s.suspendedBy);
  const report = await applyFleet(
    deps.target,
    index,
    {
      prune: true,
      allowMassPrune: deps.allowMassPrune,
      dryRun: false,
      owner: deps.owner,
      suspendedAtRunTime,
      clusterConcurrency: deps.concurrency ?? 4,
      run: {
        via: "the reconciler",
        get revision() {
          return snap.revision;
        },
      },
    },
    {
      engine: deps.engine,
      chunkSize: deps.chunkSize ?? INVENTORY_CHUNK,
      names: run.names,
      removed: run.removed,
      ties: "first-name",
      peers: run.peers,
      forget: true,
      interleave: true,
      // A full pass reads each chunk's records afresh (a rival's record created meanwhile is seen); an incremental one
      // once.
      unitPerChunk: run.full,
      // Each folder's digest goes on its record (settle), for the next reconciler's index.
      digests: true,
      mayWrite: deps.mayWrite,
      stopping: deps.stopping,
      ...(run.rollout ? { pins: run.rollout } : {}),
      warn: (message, fields) => deps.logger.warn(message, fields),
      around: forCluster,
      betweenChunks: async () => {
        const res = await deps.betweenChunks?.(snap.revision);
        if (res === undefined) return undefined;
        reconciledBetween(between, snap.revision, res);
        snap = { root: snap.root, revision: res.revision };
        return res.revision;
      },
      // What a pass between the chunks reconciled at the revision this pass follows is not done again.
      skip: (name) => between.get(name) === snap.revision,
      // A change does not wait for the chunk in hand: it runs between two of its clusters.
      ...(run.full && deps.pending ? { pending: deps.pending } : {}),
      onOutcome: async (o) => {
        const r = await settleOutcome(
          deps,
          o,
          snap.revision,
          run.prev.get(o.cluster) ?? state.statuses.get(o.cluster),
          !run.full,
        ).catch(
          (err: unknown): ClusterRun => ({
            cluster: o.cluster,
            hostNamespace: o.hostNamespace,
            revision: snap.revision,
            result: "failed",
            message: (err as Error).message ?? String(err),
            durationMs: o.durationMs,
            statusWritten: false,
          }),
        );
        settle(deps, state, r);
        chunk.push(r);
      },
      onChunk: () => {
        chunk.sort(byCluster);
        deps.onChunk?.(chunk);
        if (!deps.keepPlans) for (const r of chunk) delete r.sync;
        runs.push(...chunk.splice(0));
      },
    },
  );
  return { runs: runs.sort(byCluster), interrupted: !!report.interrupted };
}

/**
 * Keeps `between` (cluster -> revision it was reconciled at, by passes run between a full pass's chunks) up to date
 * with one more such pass, run from `from` (the revision the full pass followed) to `res.revision`: what it reconciled
 * is at its revision; what it did not consider did not change since `from`, so what was reconciled at `from` holds at
 * `res.revision` too, unless it could not count the changes. A cluster that failed or was skipped is the full pass's.
 */
function reconciledBetween(between: Map<string, string>, from: string, res: PassResult): void {
  const considered = new Set(res.clusters.map((r) => r.cluster));
  for (const [name, revision] of between) {
    if (revision === from && !res.uncounted && !considered.has(name)) between.set(name, res.revision);
    else between.delete(name);
  }
  for (const r of res.clusters)
    if (r.result === "failed" || r.result === "skipped") between.delete(r.cluster);
    else between.set(r.cluster, res.revision);
}

/** The host namespace a loaded cluster claims: its settings' when it is valid (with or without a spec). */
function validNamespace(c: LoadedCluster): string | undefined {
  if (c.spec) return c.spec.settings.namespace;
  if (c.valid === false || c.diagnostics.some((d) => d.severity === "error")) return undefined;
  return c.valid ? c.settings?.namespace : undefined;
}

/** The clusters vc applied before records, when the target keeps records (a host): what a full pass migrates. */
async function legacyOf(target: Target): Promise<Array<{ cluster: string; hostNamespace: string }>> {
  return target.legacyClusters ? target.legacyClusters().catch(() => []) : [];
}

/**
 * Moves the records vc kept in host namespaces before records into the records namespace (sinks/kube/migrate.ts),
 * saying so in the log. Clusters that have a record are left alone; a failure is logged and retried by the next pass.
 */
async function migrate(deps: PassDeps, legacy: Array<{ cluster: string; hostNamespace: string }>): Promise<void> {
  if (!deps.target.migrateRecords || legacy.length === 0 || !deps.mayWrite()) return;
  try {
    const mine = legacy.filter((c) => inShard(c.cluster, deps.shard));
    for (const line of await deps.target.migrateRecords(mine, {}))
      deps.logger.info(line.message, { cluster: line.cluster, hostNamespace: line.hostNamespace });
  } catch (err) {
    deps.logger.warn("cannot migrate records from host namespaces", { error: (err as Error).message });
  }
}

async function timedSync(deps: PassDeps): Promise<Snapshot> {
  const end = deps.metrics?.gitFetchDuration.startTimer();
  try {
    const snap = await deps.source.sync();
    end?.({ result: "ok" });
    return snap;
  } catch (err) {
    end?.({ result: "error" });
    deps.metrics?.errors.inc({ cluster: "", reason: "git" });
    throw err;
  }
}

function byCluster(a: ClusterRun, b: ClusterRun): number {
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}

/**
 * A cluster's status as stored on the target, read before it is reconciled (one GET), so that a run-time
 * suspension (`vc restore`) and another replica's writes are seen; the copy in memory when the read fails.
 * A full pass reads every status in one LIST first and skips the GETs.
 */
async function knownStatus(
  deps: PassDeps,
  state: PassState,
  cluster: string,
  ns: string,
): Promise<ClusterStatus | undefined> {
  const mem = state.statuses.get(cluster);
  try {
    return (await deps.store.read(cluster, ns)) ?? mem;
  } catch (err) {
    deps.logger.warn("cannot read status", { cluster, error: (err as Error).message });
    return mem;
  }
}

/** Every status on the target (one LIST), or undefined when it cannot be listed (the pass keeps those in memory). */
async function listStatuses(deps: PassDeps): Promise<ClusterStatus[] | undefined> {
  try {
    return await deps.store.list();
  } catch (err) {
    deps.logger.warn("cannot list statuses", { error: (err as Error).message });
    return undefined;
  }
}

/**
 * What the records of this shard's clusters kept of their folders' last validations (the first record of a cluster,
 * and only one that names the record's own host namespace).
 */
function validatedFolders(deps: PassDeps, listed: readonly ClusterStatus[]): Map<string, ValidatedFolder> {
  const out = new Map<string, ValidatedFolder>();
  for (const s of listed)
    if (s.validated && !out.has(s.cluster) && inShard(s.cluster, deps.shard))
      if (s.validated.settings.namespace === s.hostNamespace) out.set(s.cluster, s.validated);
  return out;
}

/**
 * Replaces the statuses in memory with those listed on the target. A status is a cluster's only when it sits in that
 * cluster's host namespace (`hostNamespaces`, from the repository): a look-alike ConfigMap elsewhere is ignored, so no
 * namespace can suspend another cluster or rewrite its history.
 */
function keepStatuses(
  deps: PassDeps,
  state: PassState,
  all: readonly ClusterStatus[],
  hostNamespaces: ReadonlyMap<string, string>,
): void {
  state.statuses.clear();
  for (const s of all) {
    if (!inShard(s.cluster, deps.shard)) continue;
    const expected = hostNamespaces.get(s.cluster);
    if (expected !== undefined && s.hostNamespace !== expected) {
      deps.logger.warn("ignoring a status outside the cluster's host namespace", {
        cluster: s.cluster,
        namespace: s.hostNamespace,
        hostNamespace: expected,
      });
      continue;
    }
    if (s.damagedHistory)
      deps.logger.warn("ignoring damaged entries of a stored history", {
        cluster: s.cluster,
        entries: s.damagedHistory,
      });
    if (state.statuses.has(s.cluster))
      deps.logger.warn("two statuses claim one cluster: keeping the first", {
        cluster: s.cluster,
        namespace: s.hostNamespace,
      });
    else state.statuses.set(s.cluster, s);
  }
}

/**
 * A cluster folder exists when it holds a file (not a dotfile) at any depth: git keeps no empty folders,
 * but a checkout that removed a cluster's files may leave its empty folders behind.
 */
function hasFiles(dir: string): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  return entries.some((e) => !e.name.startsWith(".") && (e.isDirectory() ? hasFiles(join(dir, e.name)) : true));
}

/** Folder names under clusters/ (what the loader would read), sorted. */
function clusterFolders(root: string): string[] {
  const base = join(root, CLUSTERS_DIR);
  // Never followed, and never read as "no clusters" (that would prune the fleet): the pass fails, the last good state
  // stays.
  if (lstatSync(base, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new Error("clusters/ is a symlink: refused, not followed");
  if (!existsSync(base)) return [];
  return readdirSync(base, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith(".") && hasFiles(join(base, e.name)))
    .map((e) => e.name)
    .sort();
}

function settle(deps: PassDeps, state: PassState, run: ClusterRun): void {
  const m = deps.metrics;
  if (run.result !== "skipped") m?.reconcileDuration.observe({ result: run.result }, run.durationMs / 1000);
  if (run.sync && m) {
    for (const k of ["created", "updated", "deleted", "failed"] as const)
      if (run.sync.counts[k]) m.objectsApplied.inc({ outcome: k }, run.sync.counts[k]);
  }
  if (run.result === "applied" || run.result === "deleted")
    m?.lastSuccess.set({ cluster: run.cluster }, Date.now() / 1000);
  if (run.result === "invalid" || run.result === "failed" || run.result === "blocked")
    m?.errors.inc({ cluster: run.cluster, reason: run.result });
  if (run.result === "failed") state.retry.add(run.cluster);
  else state.retry.delete(run.cluster);
  const health = run.status?.health;
  if (health && m)
    for (const h of HEALTH_STATUSES) m.clusterHealth.set({ cluster: run.cluster, health: h }, h === health ? 1 : 0);
  // Degraded right after this run changed something: the change did not work. Its entry is on the record; say it here
  // too.
  const changed = run.sync ? run.sync.counts.created + run.sync.counts.updated + run.sync.counts.deleted > 0 : false;
  if (health === "Degraded" && run.statusWritten && (changed || run.status?.history[1]?.health !== "Degraded")) {
    deps.logger.warn("cluster degraded", {
      cluster: run.cluster,
      revision: run.revision,
      reason: run.status?.healthReason,
    });
  }
  if (run.result === "deleted") {
    state.statuses.delete(run.cluster);
    m?.lastSuccess.remove({ cluster: run.cluster });
    if (m) for (const h of HEALTH_STATUSES) m.clusterHealth.remove({ cluster: run.cluster, health: h });
  } else if (run.status) state.statuses.set(run.cluster, run.status);
  const level = run.result === "failed" || run.result === "invalid" || run.result === "blocked" ? "warn" : "info";
  deps.logger[level]("reconciled", {
    cluster: run.cluster,
    revision: run.revision,
    result: run.result,
    message: run.message,
    durationMs: run.durationMs,
  });
  deps.onCluster?.(run);
}

function done(
  state: PassState,
  snap: Snapshot,
  kind: "full" | "incremental",
  runs: ClusterRun[],
  started: number,
  interrupted = false,
  nested = false,
): PassResult {
  if (!nested && !interrupted && !runs.some((r) => r.result === "skipped")) state.lastRevision = snap.revision;
  const res: PassResult = {
    revision: snap.revision,
    kind,
    clusters: runs,
    problems: runs.filter((r) => r.result === "invalid" || r.result === "failed").length,
    durationMs: Date.now() - started,
  };
  if (interrupted) res.interrupted = true;
  return res;
}
