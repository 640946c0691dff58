// Plans and applies many clusters against one target: reads live inventories once, then one plan/sync per cluster.
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { buildPlan, emptyCounts, PlanError } from "../plan/build.js";
import type { ClusterError, PlanReport, SuspendedCluster } from "../plan/format.js";
import { otherOwners } from "../plan/owner.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import { describeChange } from "../plan/fleet-summary.js";
import { loadIndexedChunk, type DesiredIndex, type DesiredState } from "./load.js";
import { runClaims } from "../plan/gates.js";
import { blockPlan } from "./gates.js";
import { holdersOf } from "../records/holders.js";
import { clustersOnTarget, INVENTORY_CHUNK, listChunkInventory } from "./inventory.js";
import { INVENTORY_TYPES, KubeTarget } from "../sinks/kube/target.js";
import { FleetInventoryReader, inNamespaceOrder, ListOrderError } from "../sinks/kube/fleet-inventory.js";
import { chunksOf, loadAhead, mapLimit } from "../util/pool.js";
import type { DiffSpill } from "../plan/spill.js";
import { applyPlan } from "./sync.js";
import type { ObjectResult, SyncResult, Target } from "../sinks/types.js";

export interface FleetOptions {
  /** Delete what is no longer desired (clusters whose cluster.yaml says `prune: false` are never pruned). */
  prune: boolean;
  allowMassPrune: boolean;
  /** Recreate objects whose change the server refuses in place, in every cluster (clusters with cluster.yaml `force: true` always do). */
  force?: boolean;
  /** Clusters named by the user: their inventories are read one by one instead of the fleet's at once. */
  selected?: string[];
  /** This source's owner name (plan/owner.ts): recorded on every object, and clusters another source owns are left alone. */
  owner?: string;
  /** Owners whose clusters this run takes over (`vc adopt --from`). */
  adoptFrom?: string[];
  /** Clusters of the repository suspended at run time (cluster -> who and why, pipeline/run-suspension.ts): neither planned nor applied. */
  suspendedAtRunTime?: ReadonlyMap<string, string>;
  /** The live inventories are the target's records (Target.recorded): plans decide by them, not by labels. */
  recorded?: boolean;
  /** Clusters an older record holds for someone else (Target.heldElsewhere): blocked with the message, nothing planned. */
  held?: ReadonlyMap<string, { message: string; sources: string[] }>;
}

/** One unit of work: a cluster of the repository, or one removed from it whose live objects remain. */
export interface FleetCluster {
  name: string;
  desired: KubeObject[];
  live: KubeObject[];
  prune: boolean;
  suspend: boolean;
  /** Recreate objects whose change the server refuses in place (--force or cluster.yaml `force`). */
  force: boolean;
  /** The cluster's folder is gone from the repository. */
  removed: boolean;
  /** Its host namespace, where the repository names it. */
  hostNamespace?: string;
}

/** Reads live inventories: one LIST per kind for the whole fleet, or per selected cluster. */
export async function readLive(target: Target, desired: DesiredState, opts: FleetOptions): Promise<Map<string, KubeObject[]>> {
  if (!opts.selected?.length) return target.listFleetInventory();
  const live = new Map<string, KubeObject[]>();
  // Across namespaces: objects left in a namespace the cluster moved away from are found and pruned.
  for (const c of desired.clusters) live.set(c.name, await target.listInventory(c.name));
  for (const name of desired.missing) live.set(name, await target.listInventory(name));
  return live;
}

/** The clusters to plan: valid ones of the repository, plus (when pruning) removed ones that still have live objects. */
export function fleetClusters(desired: DesiredState, live: Map<string, KubeObject[]>, opts: FleetOptions): { clusters: FleetCluster[]; errors: ClusterError[] } {
  const clusters: FleetCluster[] = desired.clusters.map((c) => ({ name: c.name, desired: c.objects, live: live.get(c.name) ?? [], prune: opts.prune && c.prune, suspend: c.suspend, force: !!opts.force || c.force, removed: false, hostNamespace: desired.known.get(c.name) }));
  const errors = [...desired.errors];
  const selected = opts.selected?.length ? new Set(opts.selected) : undefined;
  for (const [name, objs] of [...live].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (desired.known.has(name) || (selected && !selected.has(name)) || objs.length === 0) continue;
    // A cluster of another source that this repository does not have is simply not ours: not removed, not reported.
    if (opts.owner !== undefined && !opts.recorded && ownedElsewhere(objs, opts.owner, opts.adoptFrom)) continue;
    if (opts.prune) clusters.push({ name, desired: [], live: objs, prune: true, suspend: false, force: false, removed: true });
  }
  for (const name of desired.missing) {
    const objs = live.get(name) ?? [];
    if (objs.length === 0) errors.push({ cluster: name, message: `no cluster folder clusters/${name}, and nothing of it is live` });
    else if (objs.every(isNamespace)) errors.push({ cluster: name, message: `no cluster folder clusters/${name}; only its kept Namespace ${objs.map((o) => o.metadata.name).join(", ")} is left (delete it by hand once it is empty)` });
    else if (!opts.prune) errors.push({ cluster: name, message: `no cluster folder clusters/${name}; its ${objs.length} live objects stay until you run with --prune` });
  }
  return { clusters, errors };
}

function isNamespace(obj: KubeObject): boolean {
  return obj.kind === "Namespace" && obj.apiVersion === "v1";
}

/**
 * The clusters named with `--cluster` that are nowhere: no folder in the repository (`desired.missing`) and nothing
 * of them live on the target (one inventory read each, only for such names).
 */
export async function clustersNowhere(target: Target, desired: DesiredState): Promise<string[]> {
  const out: string[] = [];
  for (const name of desired.missing) if ((await target.listInventory(name)).length === 0) out.push(name);
  return out;
}

/** The options with what a target that keeps records says: plans decide by records, and which clusters others hold. */
async function withRecords<T extends FleetOptions>(target: Target, desired: DesiredState, opts: T): Promise<T> {
  if (!target.recorded) return opts;
  const claims = desired.clusters.map((c) => ({ cluster: c.name, hostNamespace: desired.known.get(c.name)! })).filter((c) => c.hostNamespace !== undefined);
  const held = target.heldElsewhere ? await target.heldElsewhere(claims, opts.adoptFrom) : undefined;
  return { ...opts, recorded: true, held };
}

/** True when every live object of a cluster carries the owner label of another source. */
function ownedElsewhere(objs: readonly KubeObject[], owner: string, adoptFrom: readonly string[] = []): boolean {
  return objs.every((o) => otherOwners([o], owner, new Set(adoptFrom)).length > 0);
}

/** Sets aside the clusters suspended at run time: they are neither planned nor applied (nor pruned). */
function setAsideSuspended(clusters: FleetCluster[], opts: FleetOptions): { clusters: FleetCluster[]; suspendedAtRunTime: SuspendedCluster[] } {
  const rest: FleetCluster[] = [];
  const suspendedAtRunTime: SuspendedCluster[] = [];
  for (const c of clusters) {
    const by = opts.suspendedAtRunTime?.get(c.name);
    if (by === undefined) rest.push(c);
    else suspendedAtRunTime.push({ cluster: c.name, by });
  }
  return { clusters: rest, suspendedAtRunTime };
}

/** Plans every cluster; a cluster that cannot be planned becomes an error and the others go on. */
export function planClusters(clusters: FleetCluster[], opts: FleetOptions): { plans: Plan[]; errors: ClusterError[] } {
  const plans: Plan[] = [];
  const errors: ClusterError[] = [];
  for (const c of clusters) {
    const held = opts.held?.get(c.name);
    if (held) {
      plans.push({ cluster: c.name, changes: [], counts: emptyCounts(), blocked: held.message, ...(held.sources.length > 0 ? { ownerConflict: held.sources } : {}) });
      continue;
    }
    try {
      const plan = buildPlan(c.name, c.desired, c.live, { prune: c.prune, allowMassPrune: opts.allowMassPrune, force: c.force, owner: opts.owner, adoptFrom: opts.adoptFrom, recorded: opts.recorded });
      if (c.hostNamespace !== undefined) plan.hostNamespace = c.hostNamespace;
      plans.push(plan);
    } catch (err) {
      if (!(err instanceof PlanError)) throw err;
      errors.push({ cluster: c.name, message: err.message });
    }
  }
  return { plans, errors };
}

/** The desired state in the form the target stores it (Target.prepare), so that plans compare like with like. */
export function preparedFor(target: Target, desired: DesiredState): DesiredState {
  const prepare = target.prepare?.bind(target);
  if (!prepare) return desired;
  return { ...desired, clusters: desired.clusters.map((c) => ({ ...c, objects: c.objects.map(prepare) })) };
}

/** How planFleetStreamed goes through the fleet. */
export interface StreamOptions {
  /** Clusters loaded, rendered and planned at a time (default INVENTORY_CHUNK). */
  chunkSize?: number;
  /**
   * How a host's live objects are read: "fleet" (default), one paged LIST per kind for the whole fleet, taken out a
   * chunk at a time (FleetInventoryReader); "chunk", one LIST per kind for each chunk, as `vc apply` and the reconciler
   * read them.
   */
  liveReads?: "fleet" | "chunk";
  /** Objects a page of the fleet's LISTs holds (default FLEET_PAGE). */
  pageSize?: number;
  /** Each chunk's desired state as loaded and rendered, before it is planned and let go (vc list keeps what health needs). */
  onChunk?: (desired: DesiredState) => void;
  /** Where the report's diff texts are kept until printed (vc diff): in memory up to a bound, then in a file. */
  spill?: DiffSpill;
  /** Told when the fleet's LISTs could not be used to the end and the rest was read chunk by chunk, and why. */
  onFallBack?: (why: string) => void;
}

/**
 * `vc diff` of the whole fleet, streamed: the desired state is loaded and rendered a chunk at a time (the index
 * holds the fleet's errors and namespace claims), each chunk planned against its live objects and let go; plans
 * are kept for the report. Live objects on a host: one paged LIST per kind for the whole fleet, from the store, the
 * chunks taken in the order of their host namespaces, which is the order the store lists them in
 * (FleetInventoryReader); so a fleet of any size costs one LIST per kind, and memory holds a chunk and a page or so
 * per kind. On dir: they are read with each chunk. The report is the one planFleet gives, in the repository's order.
 */
export async function planFleetStreamed(target: Target, index: DesiredIndex, opts: FleetOptions, stream: StreamOptions = {}): Promise<PlanReport> {
  // A plan writes no record: one LIST of the host's records answers all its reads of them (the host's size, the
  // fleet's inventory, the removed clusters, the public-host claims, each chunk's records and claimants).
  // A command that reads the records before it plans (vc diff) keeps its own unit of work for the whole run.
  if (!(target instanceof KubeTarget) || target.records.memoized) return planOrdered(target, index, opts, stream);
  target.records.memoize({ fleet: true });
  try {
    return await planOrdered(target, index, opts, stream);
  } finally {
    target.records.unmemoize();
  }
}

/** planStreamed, read again chunk by chunk if the server's LISTs were not in its store's key order. */
async function planOrdered(target: Target, index: DesiredIndex, opts: FleetOptions, stream: StreamOptions): Promise<PlanReport> {
  try {
    return await planStreamed(target, index, opts, stream);
  } catch (err) {
    if (!(err instanceof ListOrderError)) throw err;
    stream.onFallBack?.(err.message);
    return planStreamed(target, index, opts, { ...stream, liveReads: "chunk" });
  }
}

async function planStreamed(target: Target, index: DesiredIndex, opts: FleetOptions, stream: StreamOptions): Promise<PlanReport> {
  const { state } = index;
  const chunkSize = stream.chunkSize ?? INVENTORY_CHUNK;
  const plans: Plan[] = [];
  const kept = new KeptStrings();
  const chunkErrors: ClusterError[] = [];
  const suspendedAtRunTime: SuspendedCluster[] = [];
  const planChunk = async (desired: DesiredState, live: Map<string, KubeObject[]>): Promise<void> => {
    const prepared = preparedFor(target, desired);
    // Plans decide by the target's records, and clusters another source holds are blocked (withRecords, per chunk).
    const chunkOpts = await withRecords(target, prepared, opts);
    const all = fleetClusters(prepared, live, chunkOpts);
    const set = setAsideSuspended(all.clusters, chunkOpts);
    suspendedAtRunTime.push(...set.suspendedAtRunTime);
    const planned = planClusters(set.clusters, chunkOpts);
    // New public-host claims are compared within the chunk (live claims fleet-wide), as planFleet does for its run.
    const peers = runClaims(planned.plans);
    for (const p of await mapLimit(planned.plans, 4, (p) => blockPlan(target, p, peers))) plans.push(forReport(p, kept, stream.spill));
    chunkErrors.push(...all.errors, ...planned.errors);
  };
  let order = index.valid;
  let readLive = (names: readonly string[]) => listChunkInventory(target, names);
  if (target instanceof KubeTarget && stream.liveReads !== "chunk") {
    const records = await target.recordsByCluster();
    order = inNamespaceOrder(index.valid, (c) => records.get(c)?.hostNamespace ?? state.known.get(c));
    const reader = new FleetInventoryReader(target.client, INVENTORY_TYPES, records, order, readLive, { pageSize: stream.pageSize });
    let told = false;
    readLive = async (names) => {
      const live = await reader.take(names);
      if (reader.fellBack && !told) {
        told = true;
        stream.onFallBack?.(reader.fellBack);
      }
      return live;
    };
  }
  // The next chunk is loaded and rendered while this one's live objects are read and planned.
  for await (const [names, chunk] of loadAhead(chunksOf(order, chunkSize), (names) => loadIndexedChunk(index, names))) {
    const inChunk = new Set(names);
    stream.onChunk?.(chunk);
    const live = await readLive(names);
    // The chunk's own errors (a render failure); the repository's are in the index already.
    await planChunk({ ...chunk, errors: chunk.errors.filter((e) => inChunk.has(e.cluster)), known: state.known, missing: [] }, live);
  }
  // The report in the repository's order, whatever order the chunks were read in.
  const rank = new Map(index.valid.map((name, i) => [name, i]));
  const byRank = (a: { cluster: string }, b: { cluster: string }) => (rank.get(a.cluster) ?? rank.size) - (rank.get(b.cluster) ?? rank.size);
  plans.sort(byRank);
  chunkErrors.sort(byRank);
  // Clusters with live objects and no folder (removed), read a chunk at a time (a mass removal reads no more at once
  // than a chunk); those whose folder is invalid are never removed, and their objects are not read.
  // The clusters named but nowhere (state.missing) are reported with the first of these.
  const removed = (await clustersOnTarget(target)).filter((n) => !state.known.has(n));
  let i = 0;
  do {
    await planChunk({ ...state, clusters: [], errors: [], missing: i === 0 ? state.missing : [] }, await listChunkInventory(target, removed.slice(i, i + chunkSize)));
    i += chunkSize;
  } while (i < removed.length);
  return { plans, errors: [...state.errors, ...chunkErrors], suspendedAtRunTime };
}

/** A plan as a report shows it: its counts, and its changes without the objects they were worked out from. */
function forReport(plan: Plan, kept: KeptStrings, spill?: DiffSpill): Plan {
  // The fleet summary reads the changed fields from desired and live: worked out before they are let go.
  const changes = plan.changes.filter((c) => c.action !== "unchanged").map((c) => {
    const { desired: _d, live: _l, ref, ...rest } = c;
    const change: PlannedChange = { ...rest, ref: kept.ref(ref), summary: kept.shared(describeChange(c)) };
    return spill ? spill.keep(change) : change;
  });
  return { ...plan, changes };
}

/**
 * The strings a report keeps of each change, as copies: an object's own may be slices of the text it was parsed from,
 * which a kept slice keeps whole; the ones that repeat (API versions, kinds, namespaces, summaries) kept once.
 */
class KeptStrings {
  private readonly seen = new Map<string, string>();

  shared(s: string): string {
    let kept = this.seen.get(s);
    if (kept === undefined) {
      kept = copied(s);
      this.seen.set(kept, kept);
    }
    return kept;
  }

  ref(r: ObjectRef): ObjectRef {
    return { apiVersion: this.shared(r.apiVersion), kind: this.shared(r.kind), ...(r.namespace !== undefined ? { namespace: this.shared(r.namespace) } : {}), name: copied(r.name) };
  }
}

/** A string of its own (not a slice of a longer one). */
const copied = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

/** `vc diff`: the plans of the fleet against the target. */
export async function planFleet(target: Target, rendered: DesiredState, opts: FleetOptions): Promise<PlanReport> {
  const desired = preparedFor(target, rendered);
  opts = await withRecords(target, desired, opts);
  const live = await readLive(target, desired, opts);
  const all = fleetClusters(desired, live, opts);
  const { clusters, suspendedAtRunTime } = setAsideSuspended(all.clusters, opts);
  const planned = planClusters(clusters, opts);
  const peers = runClaims(planned.plans);
  const plans = await mapLimit(planned.plans, 4, (p) => blockPlan(target, p, peers));
  return { plans, errors: [...all.errors, ...planned.errors], suspendedAtRunTime };
}

export interface ApplyFleetOptions extends FleetOptions {
  dryRun: boolean;
  /** Clusters synced at once (default 4); objects within a stage of one cluster go 8 at a time. */
  clusterConcurrency?: number;
  onProgress?: (done: number, total: number, cluster: string, result: ObjectResult) => void;
}

export interface FleetApplyReport {
  results: SyncResult[];
  errors: ClusterError[];
  /** Clusters suspended in cluster.yaml, left alone. */
  suspended: string[];
  /** Clusters suspended at run time (`vc restore`), left alone: not applied, although the repository asks for it. */
  suspendedAtRunTime: SuspendedCluster[];
}

/** `vc apply`: plans every cluster, then syncs them, a few clusters at a time. */
export async function applyFleet(target: Target, rendered: DesiredState, opts: ApplyFleetOptions): Promise<FleetApplyReport> {
  const desired = preparedFor(target, rendered);
  opts = await withRecords(target, desired, opts);
  const live = await readLive(target, desired, opts);
  const all = fleetClusters(desired, live, opts);
  const suspended = all.clusters.filter((c) => c.suspend).map((c) => c.name);
  const { clusters, suspendedAtRunTime } = setAsideSuspended(all.clusters.filter((c) => !c.suspend), opts);
  const { plans, errors } = planClusters(clusters, opts);
  const total = plans.reduce((n, p) => n + p.changes.length, 0);
  const peers = runClaims(plans);
  let done = 0;
  const results = await mapLimit(plans, opts.clusterConcurrency ?? 4, (plan) =>
    applyPlan(target, plan, {
      prune: opts.prune,
      dryRun: opts.dryRun,
      allowMassPrune: opts.allowMassPrune,
      peers,
      onProgress: (_d, _t, r) => opts.onProgress?.(++done, total, plan.cluster, r),
    }),
  );
  return { results, errors: [...all.errors, ...errors], suspended, suspendedAtRunTime };
}

export interface StreamedApplyOptions extends ApplyFleetOptions {
  /**
   * Called with each chunk's results while they still hold their plans and per-object results (to record and print
   * them), before they are let go; the report keeps a compact copy of each (cluster, counts, ok, what blocked it).
   */
  onChunk?: (results: SyncResult[]) => Promise<void> | void;
  /** Called after each chunk: clusters done of the clusters to apply (removed ones included once they are known). */
  onChunkDone?: (done: number, total: number, objects: number) => void;
}

/**
 * `vc apply` of the whole fleet, streamed: the fleet is indexed in summary (errors, host namespaces, public host
 * claims), then loaded, rendered, planned, applied and let go a chunk at a time. Rules across clusters come from the
 * index: namespace uniqueness (its namespace claims), the run's new public-host claims (its host claims, decided as
 * applyFleet decides them for the whole run), ownership (one check of the records for the whole fleet before any
 * write) and the contested namespaces a record holds. Removed clusters (with --prune) follow in chunks of their own.
 * The report is applyFleet's, with each cluster's plan reduced to what the report shows and no per-object results
 * (onChunk sees them whole); `invalid` is the part of its errors that the repository's folders have.
 */
export async function applyFleetStreamed(target: Target, index: DesiredIndex, opts: StreamedApplyOptions, chunkSize = INVENTORY_CHUNK): Promise<FleetApplyReport & { invalid: ClusterError[] }> {
  const { state } = index;
  // Contested folders whose record holds their namespace are admitted (one LIST of their records), as prepareRecords does.
  const admitted = new Set<string>();
  if (index.contested.length > 0 && target instanceof KubeTarget) {
    const records = await target.recordsByCluster(index.contested);
    for (const c of holdersOf(index.contested.map((name) => ({ name, hostNamespace: state.known.get(name)! })), records)) admitted.add(c.name);
  }
  const validSet = new Set(index.valid);
  const planned = [...state.known.keys()].filter((n) => validSet.has(n) || admitted.has(n));
  // Ownership of the whole fleet, checked once before any write (one LIST of the records on a host).
  const fleetOpts = await withRecords(target, { ...state, clusters: planned.map((name) => ({ name, hostNamespace: state.known.get(name)!, prune: true, suspend: false, force: false, objects: [] })) }, opts);
  // The run's new public-host claims, from the index: every cluster that will be planned and synced (applyFleet's runClaims).
  const peers = new Map<string, string[]>();
  for (const name of planned) {
    const hosts = index.hosts.get(name);
    if (!hosts || index.suspended.has(name) || opts.suspendedAtRunTime?.has(name) || fleetOpts.held?.has(name)) continue;
    peers.set(name, hosts);
  }
  const results: SyncResult[] = [];
  const renderErrors = new Map<string, ClusterError>();
  const otherErrors: ClusterError[] = [];
  const suspended: string[] = [];
  const suspendedAtRunTime: SuspendedCluster[] = [];
  let total = planned.length;
  let done = 0;
  let objects = 0;
  let planTotal = 0;
  let planDone = 0;
  const applyChunk = async (desired: DesiredState, live: Map<string, KubeObject[]>, count: number): Promise<void> => {
    const prepared = preparedFor(target, desired);
    const all = fleetClusters(prepared, live, fleetOpts);
    suspended.push(...all.clusters.filter((c) => c.suspend).map((c) => c.name));
    const set = setAsideSuspended(all.clusters.filter((c) => !c.suspend), fleetOpts);
    suspendedAtRunTime.push(...set.suspendedAtRunTime);
    const plannedChunk = planClusters(set.clusters, fleetOpts);
    otherErrors.push(...all.errors, ...plannedChunk.errors);
    // Progress counts the objects planned so far: the whole run's when it fits in one chunk.
    planTotal += plannedChunk.plans.reduce((n, p) => n + p.changes.length, 0);
    const synced = await mapLimit(plannedChunk.plans, opts.clusterConcurrency ?? 4, (plan) =>
      applyPlan(target, plan, { prune: opts.prune, dryRun: opts.dryRun, allowMassPrune: opts.allowMassPrune, peers, onProgress: (_d, _t, r) => opts.onProgress?.(++planDone, planTotal, plan.cluster, r) }),
    );
    await opts.onChunk?.(synced);
    for (const s of synced) {
      objects += s.counts.created + s.counts.updated + s.counts.deleted;
      results.push(compact(s));
    }
    done += count;
    opts.onChunkDone?.(done, total, objects);
  };
  // The next chunk is loaded and rendered while the server applies this one.
  for await (const [names, chunk] of loadAhead(chunksOf(planned, chunkSize), (names) => loadIndexedChunk(index, names))) {
    const inChunk = new Set(names);
    const clusters = [...chunk.clusters, ...(chunk.contested ?? []).filter((c) => admitted.has(c.name))].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A cluster the index found valid that fails to render here; the repository's own errors are in the index already.
    for (const e of chunk.errors) if (inChunk.has(e.cluster) && validSet.has(e.cluster) && !clusters.some((c) => c.name === e.cluster)) renderErrors.set(e.cluster, e);
    await inRecordsMemo(target, async () => applyChunk({ ...chunk, clusters, errors: [], known: state.known, missing: [], contested: undefined }, await listChunkInventory(target, names), names.length));
  }
  if (opts.prune) {
    // Clusters on the target whose folder is gone, in chunks of their own (folders that are invalid are never removed).
    const removed = (await clustersOnTarget(target)).filter((n) => !state.known.has(n));
    total += removed.length;
    for (let i = 0; i < removed.length; i += chunkSize) {
      const names = removed.slice(i, i + chunkSize);
      await inRecordsMemo(target, async () => applyChunk({ ...state, clusters: [], errors: [] }, await listChunkInventory(target, names), names.length));
    }
  }
  // The errors in applyFleet's order: each cluster's (invalid, refused, or not renderable) in the repository's order, the repository's own, then the plans'.
  const byCluster = new Map<string, ClusterError>();
  const repository: ClusterError[] = [];
  for (const e of state.errors) {
    if (admitted.has(e.cluster)) continue;
    if (state.known.has(e.cluster) && !byCluster.has(e.cluster)) byCluster.set(e.cluster, e);
    else repository.push(e);
  }
  const errors: ClusterError[] = [];
  for (const name of state.known.keys()) {
    const e = byCluster.get(name) ?? renderErrors.get(name);
    if (e) errors.push(e);
  }
  errors.push(...repository);
  // `invalid`: the errors of the repository (what applyFleet's desired state holds), recorded as such; the plans' are not.
  return { results, errors: [...errors, ...otherErrors], suspended, suspendedAtRunTime, invalid: errors };
}

/**
 * Runs one chunk of a streamed apply with the host's records remembered (RecordStore.memoize): the chunk's records are
 * read with the one LIST that reads its live inventory, and its clusters' checks and status writes read them from
 * there, not with a GET each. A new chunk reads afresh.
 */
async function inRecordsMemo<T>(target: Target, chunk: () => Promise<T>): Promise<T> {
  if (!(target instanceof KubeTarget)) return chunk();
  target.records.memoize();
  try {
    return await chunk();
  } finally {
    target.records.unmemoize();
  }
}

/** A cluster's sync as a report keeps it once it is printed and recorded: no objects, and only the results that are not unchanged. */
function compact(s: SyncResult): SyncResult {
  const { changes: _changes, inventory: _inventory, ...plan } = s.plan;
  return { ...s, plan: { ...plan, changes: [] }, results: [] };
}
