// One reconcile pass: sync the source, pick the clusters (changed paths or everything), reconcile each, keep status.
import { existsSync, lstatSync, readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { defaultHostNamespace } from "../model/cluster.js";
import type { KubeObject } from "../kube/object.js";
import { affectedClusters, CLUSTERS_DIR } from "./affected.js";
import { passClaims } from "../pipeline/claims.js";
import { forCluster } from "./warning-log.js";
import { clustersReachedBy } from "../repo/fleet-base.js";
import { reconcilePresent, reconcileRemoved, type ClusterContext, type ClusterRun } from "../pipeline/cluster.js";
import type { LoadedCluster, LoadOptions, LoadResult } from "../pipeline/engine.js";
import type { Logger } from "../model/log.js";
import type { ReconcilerMetrics } from "./metrics.js";
import { inShard, type Shard } from "./shard.js";
import { clustersOnTarget, INVENTORY_CHUNK, legacyClusters, listChunkInventory } from "../pipeline/inventory.js";
import { migrateRecords, migrationLine } from "../sinks/kube/migrate.js";
import { holdersOf } from "../records/holders.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Snapshot, Source } from "./source.js";
import type { ClusterStatus } from "../records/status.js";
import { namespaceClaims } from "../validate/namespace-claims.js";
import { HEALTH_STATUSES } from "../model/health.js";
import { newRolloutMemory, rolloutForPass, type PassRollout, type RolloutMemory } from "../rollout/driver.js";

export type PassRequest =
  /** Every cluster of the repository, plus clusters known on the host whose folder is gone. */
  | { kind: "full" }
  /** The clusters touched since the last pass (changed paths between revisions, plus `paths` from a watcher). */
  | { kind: "incremental"; paths?: string[] };

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
  /** Called with each chunk's runs (sorted by cluster, plans still held) before they are let go: --once prints as it goes. */
  onChunk?: (runs: ClusterRun[]) => void;
  /**
   * Called between the chunks of a full pass: work that must not wait for the pass (a commit's changed clusters)
   * runs here. Returns the revision that work reached, which the rest of the pass follows; undefined when none ran.
   */
  betweenChunks?: () => Promise<string | undefined>;
  /** True once the reconciler is stopping: no further cluster is started; those in hand finish and record their status. */
  stopping?: () => boolean;
  /** Where rollouts materialise base snapshots (default: a private folder of the process). */
  basesDir?: string;
}

export function newPassState(): PassState {
  return { statuses: new Map(), retry: new Set() };
}

/** The pass's rollout (src/rollout/driver.ts): only the first shard's replica drives it; undefined on a dir: target. */
async function passRollout(deps: PassDeps, state: PassState, snap: Snapshot, folders: () => string[], kind: "full" | "incremental"): Promise<PassRollout | undefined> {
  state.rollout ??= newRolloutMemory();
  return rolloutForPass({ ...deps, drives: !deps.shard || deps.shard.index === 0, sharded: (deps.shard?.count ?? 1) > 1 }, state.rollout, snap.root, snap.revision, state.statuses, folders, kind);
}

/** Syncs the source (errors propagate: the caller backs off) and reconciles what the request selects. */
export async function runPass(deps: PassDeps, state: PassState, req: PassRequest): Promise<PassResult> {
  const started = Date.now();
  const snap = await timedSync(deps);
  let kind = req.kind;
  let names: string[] | undefined;
  if (req.kind === "incremental") {
    const changed = state.lastRevision === undefined ? undefined : await deps.source.changes(state.lastRevision, snap.revision);
    if (changed === undefined) kind = "full";
    else names = [...new Set([...affectedClusters([...changed, ...(req.paths ?? [])], CLUSTERS_DIR, (f) => clustersReachedBy(snap.root, f, clusterFolders(snap.root))), ...state.retry])].sort();
  }

  // The records are read once per pass (a full pass: once per chunk) and kept up to date with its own writes (records/store.ts).
  const records = deps.target instanceof KubeTarget ? deps.target.records : undefined;
  records?.memoize({ fleet: kind === "full" });
  if (deps.target instanceof KubeTarget) deps.target.forgetHostClaims();
  try {
    if (kind === "full") return await fullPass(deps, state, snap, started);
    return await incrementalPass(deps, state, snap, started, names);
  } finally {
    records?.unmemoize();
  }
}

async function incrementalPass(deps: PassDeps, state: PassState, snap: Snapshot, started: number, names: string[] | undefined): Promise<PassResult> {
  // A rollout adds the clusters it moves (and those in flight) and pins each cluster to its base (src/rollout/).
  const rollout = await passRollout(deps, state, snap, () => clusterFolders(snap.root), "incremental");
  names = [...new Set([...(names ?? []), ...(rollout?.extra ?? [])])].sort().filter((n) => inShard(n, deps.shard));
  const present = names.filter((n) => hasFiles(join(snap.root, CLUSTERS_DIR, n)));
  const removed = names.filter((n) => !present.includes(n));
  const loaded = present.length > 0 ? attribute(await loadIsolated(deps, snap.root, present, { bases: await rollout?.basesFor(present) })) : [];
  await rollout?.annotate(loaded, async (n) => (await loadIsolated(deps, snap.root, n)).clusters);
  await migrate(deps, loaded.filter((c) => c.spec).map((c) => ({ cluster: c.name, hostNamespace: c.spec!.settings.namespace })));
  await admitHolders(deps, loaded);
  const { runs, complete } = await reconcileAll(deps, state, snap, loaded, removed, undefined, passClaims(loaded, state.statuses));
  return done(state, snap, "incremental", runs, started, !complete);
}

/**
 * A full pass, streamed: the shard is indexed once in summary (validity and host namespace, no spec), then handled
 * chunk by chunk (load -> validate -> render -> plan -> apply -> let go), so memory follows the chunk, not the fleet.
 * Between chunks, pending changes run first (betweenChunks) and a stop request ends the pass.
 */
async function fullPass(deps: PassDeps, state: PassState, first: Snapshot, started: number): Promise<PassResult> {
  let snap = first;
  const folders = clusterFolders(snap.root);
  const mine = folders.filter((n) => inShard(n, deps.shard));
  const hostNamespaces = new Map<string, string>();
  let claims = new Map<string, string[]>();
  let index: LoadedCluster[] = [];
  if (mine.length > 0) {
    const loadedIndex = await loadIsolated(deps, snap.root, mine, { detail: "summary" });
    claims = namespaceClaims(loadedIndex.clusters);
    index = attribute(loadedIndex);
    for (const c of index) {
      const ns = validNamespace(c);
      if (ns !== undefined) hostNamespaces.set(c.name, ns);
    }
  }
  await migrate(deps, await legacyClusters(deps.target).catch(() => []));
  await refreshStatuses(deps, state, hostNamespaces);
  // The rollout is read and stepped once the statuses (each cluster's pinned base) are known; the summary index above
  // is of the newest base (validity and host namespaces), each chunk below is loaded at its clusters' pins.
  const rollout = await passRollout(deps, state, snap, () => folders, "full");
  // Public host claims of the whole pass, decided before any write (chunks and concurrent syncs see the same claims):
  // from the summary index, which carries each valid folder's claimed hosts.
  const peers = passClaims(index, state.statuses);
  const gone = new Set([...(await clustersOnTarget(deps.target)), ...state.statuses.keys()]);
  for (const n of folders) gone.delete(n);
  const present = new Set(mine);
  const names = [...mine, ...[...gone].filter((n) => inShard(n, deps.shard))].sort();
  const runs: ClusterRun[] = [];
  const size = deps.chunkSize ?? INVENTORY_CHUNK;
  let complete = true;
  for (let i = 0; i < names.length; i += size) {
    if (i > 0) {
      const revision = await deps.betweenChunks?.();
      if (revision !== undefined) snap = { root: snap.root, revision };
    }
    if (deps.stopping?.()) {
      complete = false;
      break;
    }
    // Each chunk reads its own clusters' records afresh (a rival's record created meanwhile is seen): one LIST naming
    // them with its live objects, and the claimants of its claims; not every record of the host once per chunk.
    if (deps.target instanceof KubeTarget) deps.target.records.memoize();
    const chunk = names.slice(i, i + size);
    const chunkPresent = chunk.filter((n) => present.has(n));
    const loaded = chunkPresent.length === 0 ? [] : attribute(await loadIsolated(deps, snap.root, chunkPresent, { namespaceClaims: claims, bases: await rollout?.basesFor(chunkPresent) }));
    await rollout?.annotate(loaded, async (n) => (await loadIsolated(deps, snap.root, n, { namespaceClaims: claims })).clusters);
    // Of folders claiming one namespace, the one whose record holds it on the host is valid again.
    await admitHolders(deps, loaded);
    // The chunk's live objects: one LIST per kind on a host, each cluster's folder once on dir:.
    const live = await listChunkInventory(deps.target, chunk);
    // The chunk's claims on clusters and host namespaces against other records: one LIST, not two per cluster.
    if (deps.target instanceof KubeTarget) await deps.target.primeClaims(loaded.filter((c) => c.spec).map((c) => ({ cluster: c.name, hostNamespace: c.spec!.settings.namespace })));
    const res = await reconcileAll(deps, state, snap, loaded, chunk.filter((n) => !present.has(n)), live, peers);
    runs.push(...res.runs);
    if (!res.complete) {
      complete = false;
      break;
    }
  }
  return done(state, snap, "full", runs.sort(byCluster), started, !complete);
}

/** The host namespace a loaded cluster claims: its settings' when it is valid (with or without a spec). */
function validNamespace(c: LoadedCluster): string | undefined {
  if (c.spec) return c.spec.settings.namespace;
  if (c.valid === false || c.diagnostics.some((d) => d.severity === "error")) return undefined;
  return c.valid ? c.settings?.namespace : undefined;
}

/**
 * Loads the named clusters together; when that throws (a loader bug, a file no limit foresaw), loads them one by
 * one so that only the cluster that fails is invalid, with its own error, and the others go on.
 */
async function loadIsolated(deps: PassDeps, root: string, names: string[], extra: Omit<LoadOptions, "clusters"> = {}): Promise<LoadResult> {
  try {
    return await deps.engine.load(root, { ...extra, clusters: names });
  } catch (err) {
    deps.logger.warn("loading the clusters together failed: loading them one by one", { error: (err as Error).message });
  }
  const out: LoadResult = { clusters: [], diagnostics: [] };
  for (const name of names) {
    try {
      const one = await deps.engine.load(root, { ...extra, clusters: [name] });
      out.clusters.push(...one.clusters);
      out.diagnostics.push(...one.diagnostics);
    } catch (err) {
      const dir = `${CLUSTERS_DIR}/${name}`;
      const message = `cannot load this cluster folder: ${(err as Error).message ?? String(err)}`;
      out.clusters.push({ name, dir, diagnostics: [{ file: dir, line: 0, col: 0, severity: "error", code: "load-failed", message }] });
    }
  }
  return out;
}

/**
 * Moves the records vc kept in host namespaces before records into the records namespace (sinks/kube/migrate.ts), saying
 * so in the log. Clusters that have a record are left alone; a failure is logged and retried by the next pass.
 */
async function migrate(deps: PassDeps, legacy: Array<{ cluster: string; hostNamespace: string }>): Promise<void> {
  if (!(deps.target instanceof KubeTarget) || legacy.length === 0 || !deps.mayWrite()) return;
  try {
    for (const m of await migrateRecords(deps.target, legacy.filter((c) => inShard(c.cluster, deps.shard)))) deps.logger.info(migrationLine(m, false), { cluster: m.cluster, hostNamespace: m.hostNamespace });
  } catch (err) {
    deps.logger.warn("cannot migrate records from host namespaces", { error: (err as Error).message });
  }
}

/**
 * Two folders claiming one host namespace: the one whose record holds the namespace on the host is valid again (the
 * newcomer stays refused, with its error). A failure to read the records leaves both refused.
 */
async function admitHolders(deps: PassDeps, loaded: LoadedCluster[]): Promise<void> {
  const contested = loaded.filter((c) => !c.spec && c.contested).map((c) => ({ name: c.name, hostNamespace: c.contested!.settings.namespace, loaded: c }));
  if (contested.length === 0 || !(deps.target instanceof KubeTarget)) return;
  try {
    for (const a of holdersOf(contested, await deps.target.recordsByCluster(contested.map((c) => c.name)))) {
      a.loaded.spec = a.loaded.contested;
      a.loaded.diagnostics = a.loaded.diagnostics.filter((d) => d.code !== "namespace-conflict");
    }
  } catch (err) {
    deps.logger.warn("cannot read the records of clusters claiming one namespace: both stay refused", { error: (err as Error).message });
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

async function reconcileAll(
  deps: PassDeps,
  state: PassState,
  snap: Snapshot,
  loaded: LoadedCluster[],
  removed: string[],
  live: Map<string, KubeObject[]> | undefined,
  peers: ReadonlyMap<string, readonly string[]>,
): Promise<{ runs: ClusterRun[]; complete: boolean }> {
  const jobs: Job[] = [];
  for (const c of loaded) {
    const ns = c.spec?.settings.namespace ?? state.statuses.get(c.name)?.hostNamespace ?? defaultHostNamespace(c.name);
    jobs.push({
      cluster: c.name,
      ns,
      // A full pass (live listed) records a new revision only when something changed; an incremental one always.
      run: async () => reconcilePresent(deps, c, snap.revision, await knownStatus(deps, state, c.name, ns, !!live), take(live, c.name), !live, peers),
    });
  }
  for (const name of removed) {
    const ns = state.statuses.get(name)?.hostNamespace ?? namespaceOf(live?.get(name)) ?? defaultHostNamespace(name);
    jobs.push({
      cluster: name,
      ns,
      run: async () => reconcileRemoved(deps, name, ns, snap.revision, await knownStatus(deps, state, name, ns, !!live), take(live, name)),
    });
  }
  // The jobs hold the loaded clusters; each is released once taken, so a full pass does not keep 1,000 specs to its end.
  loaded.length = 0;
  const queue: Array<Job | undefined> = jobs;
  const runs: ClusterRun[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    // Stopping: the clusters in hand finish (and record their status); no other is started.
    while (next < queue.length && !deps.stopping?.()) {
      const job = queue[next]!;
      queue[next++] = undefined;
      const run = await safely(job, snap.revision);
      settle(deps, state, run);
      runs.push(run);
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, queue.length) }, worker));
  runs.sort(byCluster);
  deps.onChunk?.(runs);
  if (!deps.keepPlans) for (const run of runs) delete run.sync;
  return { runs, complete: next >= queue.length };
}

function byCluster(a: ClusterRun, b: ClusterRun): number {
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}

/**
 * A cluster's status as stored on the target, read before it is reconciled (one GET), so that a run-time
 * suspension (`vc restore`) and another replica's writes are seen; the copy in memory when the read fails.
 * A full pass reads every status in one LIST first and skips the GETs.
 */
async function knownStatus(deps: PassDeps, state: PassState, cluster: string, ns: string, fresh: boolean): Promise<ClusterStatus | undefined> {
  const mem = state.statuses.get(cluster);
  if (fresh) return mem;
  try {
    return (await deps.store.read(cluster, ns)) ?? mem;
  } catch (err) {
    deps.logger.warn("cannot read status", { cluster, error: (err as Error).message });
    return mem;
  }
}

/**
 * Replaces the statuses in memory with those on the target (one LIST); keeps memory when the list fails. A status is
 * a cluster's only when it sits in that cluster's host namespace (`hostNamespaces`, from the repository): a
 * look-alike ConfigMap elsewhere is ignored, so no namespace can suspend another cluster or rewrite its history.
 */
async function refreshStatuses(deps: PassDeps, state: PassState, hostNamespaces: ReadonlyMap<string, string>): Promise<void> {
  try {
    const all = await deps.store.list();
    state.statuses.clear();
    for (const s of all) {
      if (!inShard(s.cluster, deps.shard)) continue;
      const expected = hostNamespaces.get(s.cluster);
      if (expected !== undefined && s.hostNamespace !== expected) {
        deps.logger.warn("ignoring a status outside the cluster's host namespace", { cluster: s.cluster, namespace: s.hostNamespace, hostNamespace: expected });
        continue;
      }
      if (s.damagedHistory) deps.logger.warn("ignoring damaged entries of a stored history", { cluster: s.cluster, entries: s.damagedHistory });
      if (state.statuses.has(s.cluster)) deps.logger.warn("two statuses claim one cluster: keeping the first", { cluster: s.cluster, namespace: s.hostNamespace });
      else state.statuses.set(s.cluster, s);
    }
  } catch (err) {
    deps.logger.warn("cannot list statuses", { error: (err as Error).message });
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

function namespaceOf(objs: KubeObject[] | undefined): string | undefined {
  return objs?.find((o) => o.metadata.namespace)?.metadata.namespace;
}

/** A cluster's share of the fleet inventory, released from the map as it is used (the fleet's live objects are large). */
function take(live: Map<string, KubeObject[]> | undefined, cluster: string): KubeObject[] | undefined {
  if (!live) return undefined;
  const objs = live.get(cluster) ?? [];
  live.delete(cluster);
  return objs;
}

interface Job {
  cluster: string;
  ns: string;
  run: () => Promise<ClusterRun>;
}

async function safely(job: Job, revision: string): Promise<ClusterRun> {
  const started = Date.now();
  try {
    return await forCluster(job.cluster, job.run);
  } catch (err) {
    // A failure outside the per-object handling (listing, render, status write): this cluster fails and is retried, others go on.
    const message = (err as Error).message ?? String(err);
    return { cluster: job.cluster, hostNamespace: job.ns, revision, result: "failed", message, durationMs: Date.now() - started, statusWritten: false };
  }
}

/** Folder names under clusters/ (what the loader would read), sorted. */
function clusterFolders(root: string): string[] {
  const base = join(root, CLUSTERS_DIR);
  // Never followed, and never read as "no clusters" (that would prune the fleet): the pass fails, the last good state stays.
  if (lstatSync(base, { throwIfNoEntry: false })?.isSymbolicLink()) throw new Error("clusters/ is a symlink: refused, not followed");
  if (!existsSync(base)) return [];
  return readdirSync(base, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith(".") && hasFiles(join(base, e.name)))
    .map((e) => e.name)
    .sort();
}

/** Repository-level errors located in a cluster's folder make that cluster invalid too. */
function attribute(res: LoadResult): LoadedCluster[] {
  const errors = res.diagnostics.filter((d) => d.severity === "error");
  if (errors.length === 0) return res.clusters;
  return res.clusters.map((c) => {
    const known = new Set(c.diagnostics.map((d) => JSON.stringify(d)));
    const mine = errors.filter((d) => (d.file === c.dir || d.file.startsWith(`${c.dir}/`)) && !known.has(JSON.stringify(d)));
    if (mine.length === 0 && (c.spec === undefined || !c.diagnostics.some((d) => d.severity === "error"))) return c;
    const { spec: _spec, ...rest } = c;
    return { ...rest, diagnostics: [...c.diagnostics, ...mine] };
  });
}

function settle(deps: PassDeps, state: PassState, run: ClusterRun): void {
  const m = deps.metrics;
  if (run.result !== "skipped") m?.reconcileDuration.observe({ result: run.result }, run.durationMs / 1000);
  if (run.sync && m) {
    for (const k of ["created", "updated", "deleted", "failed"] as const) if (run.sync.counts[k]) m.objectsApplied.inc({ outcome: k }, run.sync.counts[k]);
  }
  if (run.result === "applied" || run.result === "deleted") m?.lastSuccess.set({ cluster: run.cluster }, Date.now() / 1000);
  if (run.result === "invalid" || run.result === "failed" || run.result === "blocked") m?.errors.inc({ cluster: run.cluster, reason: run.result });
  if (run.result === "failed") state.retry.add(run.cluster);
  else state.retry.delete(run.cluster);
  const health = run.status?.health;
  if (health && m) for (const h of HEALTH_STATUSES) m.clusterHealth.set({ cluster: run.cluster, health: h }, h === health ? 1 : 0);
  // Degraded right after this run changed something: the change did not work. Its entry is on the record; say it here too.
  const changed = run.sync ? run.sync.counts.created + run.sync.counts.updated + run.sync.counts.deleted > 0 : false;
  if (health === "Degraded" && run.statusWritten && (changed || run.status?.history[1]?.health !== "Degraded")) {
    deps.logger.warn("cluster degraded", { cluster: run.cluster, revision: run.revision, reason: run.status?.healthReason });
  }
  if (run.result === "deleted") {
    state.statuses.delete(run.cluster);
    m?.lastSuccess.remove({ cluster: run.cluster });
    if (m) for (const h of HEALTH_STATUSES) m.clusterHealth.remove({ cluster: run.cluster, health: h });
  } else if (run.status) state.statuses.set(run.cluster, run.status);
  const level = run.result === "failed" || run.result === "invalid" || run.result === "blocked" ? "warn" : "info";
  deps.logger[level]("reconciled", { cluster: run.cluster, revision: run.revision, result: run.result, message: run.message, durationMs: run.durationMs });
  deps.onCluster?.(run);
}

function done(state: PassState, snap: Snapshot, kind: "full" | "incremental", runs: ClusterRun[], started: number, interrupted = false): PassResult {
  if (!interrupted && !runs.some((r) => r.result === "skipped")) state.lastRevision = snap.revision;
  const res: PassResult = { revision: snap.revision, kind, clusters: runs, problems: runs.filter((r) => r.result === "invalid" || r.result === "failed").length, durationMs: Date.now() - started };
  if (interrupted) res.interrupted = true;
  return res;
}
