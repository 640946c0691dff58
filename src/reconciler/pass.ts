// One reconcile pass: sync the source, pick the clusters (changed paths or everything), reconcile each, keep status.
import { existsSync, lstatSync, readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { defaultHostNamespace } from "../model/cluster.js";
import type { KubeObject } from "../kube/object.js";
import { affectedClusters, CLUSTERS_DIR } from "./affected.js";
import { clustersReachedBy } from "../repo/fleet-base.js";
import { reconcilePresent, reconcileRemoved, type ClusterContext, type ClusterRun } from "./cluster.js";
import type { LoadedCluster, LoadResult } from "./engine.js";
import type { Logger } from "../log.js";
import type { ReconcilerMetrics } from "./metrics.js";
import { inShard, type Shard } from "./shard.js";
import { clustersOnTarget, INVENTORY_CHUNK, listChunkInventory } from "./inventory.js";
import type { Snapshot, Source } from "./source.js";
import type { ClusterStatus } from "./status.js";
import { HEALTH_STATUSES } from "../health/types.js";

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
}

export interface PassState {
  /** The revision of the last completed pass: where changed paths are counted from. */
  lastRevision?: string;
  /** Last status of each cluster of this replica. */
  statuses: Map<string, ClusterStatus>;
  /** Clusters whose last run failed (API errors): retried by the next pass. */
  retry: Set<string>;
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
  /** Clusters per inventory chunk of a full pass (default INVENTORY_CHUNK). */
  chunkSize?: number;
}

export function newPassState(): PassState {
  return { statuses: new Map(), retry: new Set() };
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

  if (kind === "full") {
    const folders = clusterFolders(snap.root);
    const mine = folders.filter((n) => inShard(n, deps.shard));
    const loadedMine = mine.length === 0 ? [] : attribute(await loadIsolated(deps, snap.root, mine));
    await refreshStatuses(deps, state, new Map(loadedMine.filter((c) => c.spec).map((c) => [c.name, c.spec!.settings.namespace])));
    const gone = new Set([...(await clustersOnTarget(deps.target)), ...state.statuses.keys()]);
    for (const n of folders) gone.delete(n);
    const removed = [...gone].filter((n) => inShard(n, deps.shard)).sort();
    // Chunk by chunk: list the chunk's live objects (one LIST per kind), reconcile it, let it go.
    const runs: ClusterRun[] = [];
    const size = deps.chunkSize ?? INVENTORY_CHUNK;
    for (let i = 0; i < loadedMine.length + removed.length; i += size) {
      const chunkLoaded = loadedMine.slice(i, i + size);
      const chunkRemoved = removed.slice(Math.max(0, i - loadedMine.length), Math.max(0, i + size - loadedMine.length));
      const live = await listChunkInventory(deps.target, [...chunkLoaded.map((c) => c.name), ...chunkRemoved]);
      runs.push(...(await reconcileAll(deps, state, snap, chunkLoaded, chunkRemoved, live)));
    }
    loadedMine.length = 0;
    return done(state, snap, "full", runs.sort(byCluster), started);
  }
  names = (names ?? []).filter((n) => inShard(n, deps.shard));
  const present = names.filter((n) => hasFiles(join(snap.root, CLUSTERS_DIR, n)));
  const removed = names.filter((n) => !present.includes(n));
  const loaded = present.length > 0 ? attribute(await loadIsolated(deps, snap.root, present)) : [];
  const runs = await reconcileAll(deps, state, snap, loaded, removed, undefined);
  return done(state, snap, "incremental", runs, started);
}

/**
 * Loads the named clusters together; when that throws (a loader bug, a file no limit foresaw), loads them one by
 * one so that only the cluster that fails is invalid, with its own error, and the others go on.
 */
async function loadIsolated(deps: PassDeps, root: string, names: string[]): Promise<LoadResult> {
  try {
    return await deps.engine.load(root, { clusters: names });
  } catch (err) {
    deps.logger.warn("loading the clusters together failed: loading them one by one", { error: (err as Error).message });
  }
  const out: LoadResult = { clusters: [], diagnostics: [] };
  for (const name of names) {
    try {
      const one = await deps.engine.load(root, { clusters: [name] });
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
): Promise<ClusterRun[]> {
  const jobs: Job[] = [];
  for (const c of loaded) {
    const ns = c.spec?.settings.namespace ?? state.statuses.get(c.name)?.hostNamespace ?? defaultHostNamespace(c.name);
    jobs.push({
      cluster: c.name,
      ns,
      // A full pass (live listed) records a new revision only when something changed; an incremental one always.
      run: async () => reconcilePresent(deps, c, snap.revision, await knownStatus(deps, state, c.name, ns, !!live), take(live, c.name), !live),
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
    while (next < queue.length) {
      const job = queue[next]!;
      queue[next++] = undefined;
      const run = await safely(job, snap.revision);
      settle(deps, state, run);
      if (!deps.keepPlans) delete run.sync;
      runs.push(run);
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, queue.length) }, worker));
  return runs.sort(byCluster);
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
    return await job.run();
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

function done(state: PassState, snap: Snapshot, kind: "full" | "incremental", runs: ClusterRun[], started: number): PassResult {
  if (!runs.some((r) => r.result === "skipped")) state.lastRevision = snap.revision;
  return { revision: snap.revision, kind, clusters: runs, problems: runs.filter((r) => r.result === "invalid" || r.result === "failed").length, durationMs: Date.now() - started };
}
