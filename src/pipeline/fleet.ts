// The one driver of the pipeline for a fleet: a chunk at a time, load + validate -> render -> plan -> (apply), for
// `vc diff`, `vc list`, `vc apply`, `vc adopt`, `vc create` and the reconciler's passes alike.
import type { KubeObject } from "../kube/object.js";
import type { ClusterError, PlanReport, SuspendedCluster } from "../plan/format.js";
import type { ObjectResult, Plan, SyncResult } from "../plan/types.js";
import type { PeerTies } from "../claims/host-claims.js";
import { ReadOrderError, type Target } from "../sinks/types.js";
import { mapLimit } from "../util/pool.js";
import { applyPlan, ClusterBusyError, StalePlanError, type SyncOptions } from "./apply.js";
import {
  fleetChunks,
  fleetClusters,
  heldInChunk,
  preparedFor,
  removedClusters,
  runNames,
  runPeers,
  setAsideSuspended,
  type Chunk,
  type ChunkOptions,
  type FleetOptions,
} from "./chunks.js";
import { planClusters, type FleetCluster } from "./cluster.js";
import type { Engine, LoadedCluster } from "./engine.js";
import { blockPlan } from "./gates.js";
import { firstError, type DesiredIndex, type DesiredState } from "./load.js";
import { holdMetricsHandover } from "./metrics-handover.js";
import { compact, forReport, KeptStrings } from "./report.js";
import type { DiffSpill } from "../plan/spill.js";

export type { FleetOptions } from "./chunks.js";

/** How planFleet goes through the fleet. */
export interface StreamOptions {
  engine?: Engine;
  /** Clusters loaded, rendered and planned at a time (default INVENTORY_CHUNK). */
  chunkSize?: number;
  /**
   * How a host's live objects are read for a whole fleet: "fleet" (default), one paged LIST per kind, taken out a chunk
   * at a time (Target.fleetReader); "chunk", one LIST per kind for each chunk.
   */
  liveReads?: "fleet" | "chunk";
  /** Objects a page of the fleet's LISTs holds (default FLEET_PAGE). */
  pageSize?: number;
  /**
   * Each chunk's desired state as loaded and rendered, before it is planned and let go (vc list keeps what health
   * needs).
   */
  onChunk?: (desired: DesiredState) => void;
  /** Where the report's diff texts are kept until printed (vc diff): in memory up to a bound, then in a file. */
  spill?: DiffSpill;
  /**
   * Keep each plan whole, objects and unchanged objects included (a small run that reads them); else as a report shows
   * it.
   */
  keepPlans?: boolean;
  /** Told when the fleet's LISTs could not be used to the end and the rest was read chunk by chunk, and why. */
  onFallBack?: (why: string) => void;
}

/**
 * `vc diff` and `vc list`: the plans of the run's clusters against the target, a chunk at a time (memory follows the
 * chunk), in the repository's order. On a host a whole fleet's live objects come from one paged LIST per kind, the
 * chunks taken in the order the store lists them. The run's records are read once (one unit of work).
 */
export async function planFleet(
  target: Target,
  index: DesiredIndex,
  opts: FleetOptions,
  stream: StreamOptions = {},
): Promise<PlanReport> {
  const own = !target.unitOpen;
  if (own) target.startUnit?.({ fleet: !opts.selected?.length });
  try {
    try {
      return await planRun(target, index, opts, stream);
    } catch (err) {
      // A LIST out of its store's key order: a chunk may have been planned short of an object; planned again chunk by
      // chunk.
      if (!(err instanceof ReadOrderError)) throw err;
      stream.onFallBack?.(err.message);
      return await planRun(target, index, opts, { ...stream, liveReads: "chunk" });
    }
  } finally {
    if (own) target.endUnit?.();
  }
}

async function planRun(
  target: Target,
  index: DesiredIndex,
  opts: FleetOptions,
  stream: StreamOptions,
): Promise<PlanReport> {
  const names = runNames(index);
  const fleetWide = stream.liveReads !== "chunk" && !opts.selected?.length && target.fleetReader;
  const reader = fleetWide
    ? await target.fleetReader!(names, index.state.known, { pageSize: stream.pageSize })
    : undefined;
  const peers = runPeers(index, names, opts);
  const kept = new KeptStrings();
  const plans: Plan[] = [];
  const errors: ClusterError[] = [];
  const suspendedAtRunTime: SuspendedCluster[] = [];
  const admitted = new Set<string>();
  let told = false;
  const removed = await removedClusters(target, index, opts, true);
  for await (const chunk of fleetChunks(target, index, {
    engine: stream.engine,
    chunkSize: stream.chunkSize,
    reader,
    names,
    removed,
  })) {
    if (reader?.fellBack && !told) {
      told = true;
      stream.onFallBack?.(reader.fellBack);
    }
    for (const name of chunk.admitted) admitted.add(name);
    if (chunk.removed.length === 0) stream.onChunk?.(chunk.desired);
    const units = await unitsOf(target, chunk, opts);
    suspendedAtRunTime.push(...units.suspendedAtRunTime);
    // A plan shows the clusters suspended in cluster.yaml too: what would change once they are resumed.
    const planned = planClusters([...units.suspended, ...units.plannable], {
      ...opts,
      recorded: target.recorded,
      held: units.held,
    });
    for (const p of await mapLimit(planned.plans, 4, (p) => blockPlan(target, p, peers)))
      plans.push(stream.keepPlans ? p : forReport(p, kept, stream.spill));
    errors.push(...chunkErrors(chunk, index), ...units.errors, ...planned.errors);
  }
  const byRank = rankOf(names);
  plans.sort(byRank);
  return {
    plans,
    errors: [...index.state.errors.filter((e) => !admitted.has(e.cluster)), ...errors.sort(byRank)],
    suspendedAtRunTime,
  };
}

/** Orders items by their cluster's place in the run (clusters not in it last, as they came). */
function rankOf(names: readonly string[]): (a: { cluster: string }, b: { cluster: string }) => number {
  const rank = new Map(names.map((name, i) => [name, i]));
  return (a, b) => (rank.get(a.cluster) ?? rank.size) - (rank.get(b.cluster) ?? rank.size);
}

/** A chunk's own errors: clusters the index found valid that fail here (a render failure). */
function chunkErrors(chunk: Chunk, index: DesiredIndex): ClusterError[] {
  const valid = new Set(index.valid);
  return chunk.desired.errors.filter((e) => valid.has(e.cluster) && chunk.loaded.some((l) => l.name === e.cluster));
}

/**
 * What a chunk holds, sorted into units of work: planned, suspended in cluster.yaml, suspended at run time, and errors.
 */
interface Units {
  /** Every unit of the chunk, by name. */
  all: Map<string, FleetCluster>;
  plannable: FleetCluster[];
  suspended: FleetCluster[];
  suspendedAtRunTime: SuspendedCluster[];
  held: Awaited<ReturnType<typeof heldInChunk>>;
  errors: ClusterError[];
}

async function unitsOf(
  target: Target,
  chunk: Chunk,
  opts: FleetOptions & { forget?: boolean; records?: boolean },
): Promise<Units> {
  const prepared = preparedFor(target, chunk.desired);
  // Plans decide by the target's records, and clusters another source holds are blocked (read for the chunk).
  const held = await heldInChunk(target, prepared, opts);
  const all = fleetClusters(prepared, chunk.live, { ...opts, recorded: target.recorded }, chunk.removed);
  // A plan that will be carried out carries the version of the record it was computed against (read with the chunk).
  if (opts.records) await withRecords(target, all.clusters);
  const set = setAsideSuspended(await holdMetricsHandover(target, all.clusters), opts);
  return {
    all: new Map(all.clusters.map((c) => [c.name, c])),
    plannable: set.clusters.filter((c) => !c.suspend),
    suspended: set.clusters.filter((c) => c.suspend),
    suspendedAtRunTime: set.suspendedAtRunTime,
    held,
    errors: all.errors,
  };
}

export interface ApplyFleetOptions extends FleetOptions, Pick<SyncOptions, "run" | "lockWaitMs" | "onWait"> {
  dryRun: boolean;
  /** Clusters synced at once (default 4); objects within a stage of one cluster go 8 at a time. */
  clusterConcurrency?: number;
  onProgress?: (done: number, total: number, cluster: string, result: ObjectResult) => void;
}

/** What became of one cluster of an applied chunk. */
export interface ClusterOutcome {
  cluster: string;
  hostNamespace: string;
  /** The cluster's folder is gone from the repository. */
  removed: boolean;
  /**
   * `synced`: planned and carried out (`sync`); `invalid`: its folder has errors (`error`); `suspended`: cluster.yaml
   * says so; `suspended-at-run-time`: an operation suspended it (`by`); `skipped`: this run may not write; `busy`:
   * another run holds the cluster's apply lease, nothing written (`error`); `failed`: the unit broke (`error`).
   */
  state: "synced" | "invalid" | "suspended" | "suspended-at-run-time" | "skipped" | "busy" | "failed";
  sync?: SyncResult;
  /** The folder as loaded (the repository's clusters). */
  loaded?: LoadedCluster;
  error?: string;
  by?: string;
  /** The cluster's desired objects, as planned (health reads them). */
  desired?: readonly KubeObject[];
  /** Its live objects as read before the run. */
  live?: readonly KubeObject[];
  durationMs: number;
}

/** How applyFleet goes through the fleet, and what it tells its caller. */
export interface ApplyHooks extends Omit<ChunkOptions, "reader" | "names" | "removed"> {
  /**
   * The repository's clusters to run, in order (default: the index's valid ones, then those contesting a namespace).
   */
  names?: readonly string[];
  /** Clusters whose folder is gone (default: with --prune those on the target the repository lacks; the named ones). */
  removed?: readonly string[];
  /** How claims nobody holds live yet are decided among the run's clusters (default "refuse-all"). */
  ties?: PeerTies;
  /** The public hosts the run's clusters claim (default: from the index, runPeers). */
  peers?: ReadonlyMap<string, readonly string[]>;
  /** Checked before each cluster is written: false (a replica that lost its lease) leaves it `skipped`. */
  mayWrite?: () => boolean;
  /** Keep each synced cluster's plan and per-object results in the report (a small run that prints them at its end). */
  keepResults?: boolean;
  /** Removed clusters with nothing live are units too, so that their record is forgotten. */
  forget?: boolean;
  /**
   * Each cluster's outcome, in its slot as it ends (the reconciler reads health and writes the status here, vc apply
   * its record): while it runs the cluster's apply lease is still held, so a run cut off before its status is written
   * leaves the record saying so.
   */
  onOutcome?: (outcome: ClusterOutcome) => Promise<void>;
  /** Each chunk's outcomes, plans and per-object results still held, before they are let go. */
  onChunk?: (outcomes: ClusterOutcome[]) => Promise<void> | void;
  /**
   * True while work waits that must not wait for the chunk's end (a change, for the reconciler): no further cluster of
   * the chunk starts; once those in hand are done, `betweenChunks` runs, then the chunk goes on without the clusters
   * that work reconciled (`skip`).
   */
  pending?: () => boolean;
  /** Runs a cluster's work in its context (the reconciler's log of warnings by cluster). */
  around?: <T>(cluster: string, work: () => Promise<T>) => Promise<T>;
  /** After each chunk: clusters done of the clusters to run, and objects changed so far. */
  onChunkDone?: (done: number, total: number, objects: number) => void;
}

export interface FleetApplyReport {
  /**
   * Each synced cluster, reduced to what a report shows (no objects, no per-object results: onChunk sees them whole)
   * unless kept.
   */
  results: SyncResult[];
  errors: ClusterError[];
  /** Clusters suspended in cluster.yaml, left alone. */
  suspended: string[];
  /** Clusters suspended at run time (`vc restore`), left alone: not applied, although the repository asks for it. */
  suspendedAtRunTime: SuspendedCluster[];
  /** The part of `errors` the repository's folders have (recorded as invalid). */
  invalid?: ClusterError[];
  /** The run stopped before its end (ApplyHooks.stopping). */
  interrupted?: boolean;
  /** Clusters another run was writing (their apply lease held): nothing of them written by this run. */
  busy?: ClusterError[];
}

/**
 * `vc apply`, `vc adopt`, `vc create --apply` and the reconciler's passes: each chunk loaded, rendered, planned and
 * applied, its clusters a few at a time, then let go. Rules across clusters come from the index: namespace uniqueness
 * (its namespace claims) and the run's new public-host claims (its host claims); clusters another source holds are
 * blocked (each chunk's records read afresh). Removed clusters (with --prune, or named) follow in chunks of their own.
 */
export async function applyFleet(
  target: Target,
  index: DesiredIndex,
  opts: ApplyFleetOptions,
  hooks: ApplyHooks = {},
): Promise<FleetApplyReport> {
  const names = hooks.names ?? runNames(index);
  const removed = hooks.removed ?? (await removedClusters(target, index, opts, false));
  const peers = hooks.peers ?? runPeers(index, names, opts);
  const run = {
    results: [] as SyncResult[],
    errors: [] as ClusterError[],
    suspended: [] as string[],
    suspendedAtRunTime: [] as SuspendedCluster[],
    busy: [] as ClusterError[],
    admitted: new Set<string>(),
  };
  const progress = { total: names.length + removed.length, done: 0, objects: 0, planned: 0, applied: 0 };
  const own = !target.unitOpen;
  let interrupted = false;
  try {
    for await (const chunk of fleetChunks(target, index, { ...hooks, names, removed })) {
      for (const name of chunk.admitted) run.admitted.add(name);
      const { outcomes, errors, expected } = await applyChunk(target, chunk, index, opts, hooks, peers, progress);
      if (outcomes.length < expected) interrupted = true;
      await hooks.onChunk?.(outcomes);
      for (const o of outcomes) collect(run, o, !!hooks.keepResults);
      run.errors.push(...chunkErrors(chunk, index), ...errors);
      progress.done += chunk.names.length + chunk.skipped.length;
      hooks.onChunkDone?.(progress.done, progress.total, progress.objects);
    }
  } finally {
    if (own) target.endUnit?.();
  }
  if (progress.done < progress.total) interrupted = true;
  const invalid = repositoryErrors(index, run.admitted);
  return {
    results: run.results,
    errors: [...invalid, ...run.errors],
    suspended: run.suspended,
    suspendedAtRunTime: run.suspendedAtRunTime,
    invalid,
    ...(interrupted ? { interrupted } : {}),
    ...(run.busy.length > 0 ? { busy: run.busy } : {}),
  };
}

/** Adds an outcome to the report, kept as a report keeps it. */
function collect(
  run: {
    results: SyncResult[];
    errors: ClusterError[];
    suspended: string[];
    suspendedAtRunTime: SuspendedCluster[];
    busy: ClusterError[];
  },
  o: ClusterOutcome,
  keep: boolean,
): void {
  if (o.state === "busy") run.busy.push({ cluster: o.cluster, message: o.error ?? "busy" });
  if (o.state === "synced") run.results.push(keep ? o.sync! : compact(o.sync!));
  else if (o.state === "suspended") run.suspended.push(o.cluster);
  else if (o.state === "suspended-at-run-time") run.suspendedAtRunTime.push({ cluster: o.cluster, by: o.by ?? "" });
  else if (o.state === "failed") run.errors.push({ cluster: o.cluster, message: o.error ?? "failed" });
}

/**
 * The errors of the repository's folders (those admitted by their record excepted): each cluster's in order, then the
 * repository's own.
 */
function repositoryErrors(index: DesiredIndex, admitted: ReadonlySet<string>): ClusterError[] {
  const byCluster = new Map<string, ClusterError>();
  const repository: ClusterError[] = [];
  for (const e of index.state.errors) {
    if (admitted.has(e.cluster)) continue;
    if (index.state.known.has(e.cluster) && !byCluster.has(e.cluster)) byCluster.set(e.cluster, e);
    else repository.push(e);
  }
  const out: ClusterError[] = [];
  for (const name of index.state.known.keys()) {
    const e = byCluster.get(name);
    if (e) out.push(e);
  }
  return [...out, ...repository];
}

/** One chunk through plan and apply: its clusters a few at a time, each outcome told in its slot. */
async function applyChunk(
  target: Target,
  chunk: Chunk,
  index: DesiredIndex,
  opts: ApplyFleetOptions,
  hooks: ApplyHooks,
  peers: ReadonlyMap<string, readonly string[]>,
  progress: { planned: number; applied: number; objects: number },
): Promise<{ outcomes: ClusterOutcome[]; errors: ClusterError[]; expected: number }> {
  const units = await unitsOf(target, chunk, { ...opts, forget: hooks.forget, records: !opts.dryRun });
  const planned = planClusters(units.plannable, { ...opts, recorded: target.recorded, held: units.held });
  const plans = new Map(planned.plans.map((p) => [p.cluster, p]));
  const planErrors = new Map(planned.errors.map((e) => [e.cluster, e.message]));
  progress.planned += planned.plans.reduce((n, p) => n + p.changes.length, 0);
  const jobs: Job[] = [];
  const fixed = (o: Omit<ClusterOutcome, "durationMs">) =>
    jobs.push({ base: o, run: async () => ({ ...o, durationMs: 0 }) });
  const hostNamespaceOf = (name: string, live?: readonly KubeObject[]) =>
    chunk.desired.known.get(name) ??
    index.state.known.get(name) ??
    live?.find((o) => o.metadata.namespace)?.metadata.namespace ??
    "";
  const byName = units.all;
  const runTime = new Map(units.suspendedAtRunTime.map((s) => [s.cluster, s.by]));
  const loadedByName = new Map(chunk.loaded.map((l) => [l.name, l]));
  for (const name of [
    ...chunk.loaded.map((l) => l.name),
    ...units.plannable.filter((c) => c.removed).map((c) => c.name),
  ]) {
    const loaded = loadedByName.get(name);
    const c = byName.get(name);
    const base = {
      cluster: name,
      hostNamespace: hostNamespaceOf(name, c?.live),
      removed: !loaded,
      ...(loaded ? { loaded } : {}),
    };
    if (!c)
      fixed({
        ...base,
        state: "invalid",
        error: chunk.desired.errors.find((e) => e.cluster === name)?.message ?? firstError(loaded?.diagnostics ?? []),
      });
    else if (c.suspend) fixed({ ...base, state: "suspended" });
    else if (runTime.has(name)) fixed({ ...base, state: "suspended-at-run-time", by: runTime.get(name) });
    else if (!plans.has(name)) fixed({ ...base, state: "failed", error: planErrors.get(name) ?? "cannot be planned" });
    else jobs.push({ base, run: () => applyOne(target, plans.get(name)!, c, base, opts, hooks, peers, progress) });
  }
  const pool = await runPool(target, jobs, opts.clusterConcurrency ?? 4, hooks, chunk.interject);
  return { outcomes: pool.outcomes, errors: units.errors, expected: jobs.length - pool.skipped };
}

/** Times a cluster is planned again because its record changed since its plan (another run wrote it meanwhile). */
const REPLANS = 3;

/**
 * One planned cluster carried out, unless this run may not write. A plan whose record changed before its first write
 * (another run wrote the cluster meanwhile) is computed again on what is live now; a cluster another run is writing
 * is `busy`.
 */
async function applyOne(
  target: Target,
  first: Plan,
  c: FleetCluster,
  base: Pick<ClusterOutcome, "cluster" | "hostNamespace" | "removed" | "loaded">,
  opts: ApplyFleetOptions,
  hooks: ApplyHooks,
  peers: ReadonlyMap<string, readonly string[]>,
  progress: { planned: number; applied: number; objects: number },
): Promise<ClusterOutcome> {
  const started = Date.now();
  if (hooks.mayWrite && !hooks.mayWrite()) return { ...base, state: "skipped", error: "not the leader", durationMs: 0 };
  let plan = first;
  let unit = c;
  let sync: SyncResult;
  for (let attempt = 1; ; attempt++) {
    try {
      sync = await applyPlan(target, plan, {
        prune: c.removed || opts.prune,
        dryRun: opts.dryRun,
        allowMassPrune: opts.allowMassPrune,
        force: c.force,
        peers,
        run: opts.run,
        lockWaitMs: opts.lockWaitMs,
        onWait: opts.onWait,
        ...(hooks.ties ? { peerTies: hooks.ties } : {}),
        onProgress: (_d, _t, r) => opts.onProgress?.(++progress.applied, progress.planned, plan.cluster, r),
      });
      break;
    } catch (err) {
      if (err instanceof ClusterBusyError)
        return { ...base, state: "busy", error: err.message, durationMs: Date.now() - started };
      if (!(err instanceof StalePlanError) || attempt >= REPLANS || (hooks.mayWrite && !hooks.mayWrite())) throw err;
      ({ plan, unit } = await replan(target, unit, opts));
    }
  }
  progress.objects += sync.counts.created + sync.counts.updated + sync.counts.deleted;
  return {
    ...base,
    state: "synced",
    sync: { ...sync, durationMs: Date.now() - started },
    desired: unit.desired,
    live: unit.live,
    durationMs: Date.now() - started,
  };
}

/** A cluster planned again on what is live now and its record as it is now (after its record changed). */
async function replan(
  target: Target,
  c: FleetCluster,
  opts: ApplyFleetOptions,
): Promise<{ plan: Plan; unit: FleetCluster }> {
  // From the store: another run just wrote the cluster, and the watch cache may be moments behind its writes.
  const live = (await target.listInventories([c.name], { fresh: true })).get(c.name) ?? [];
  const unit = { ...c, live };
  await withRecords(target, [unit]);
  const planned = planClusters([unit], { ...opts, recorded: target.recorded });
  const plan = planned.plans[0];
  if (!plan) throw new Error(planned.errors[0]?.message ?? `cluster ${c.name} cannot be planned`);
  return { plan, unit };
}

/** Gives each cluster the version of its record as read with its live objects (none on a target without records). */
async function withRecords(target: Target, clusters: FleetCluster[]): Promise<void> {
  if (!target.recorded || !target.recordsByCluster || clusters.length === 0) return;
  const records = await target.recordsByCluster(clusters.map((c) => c.name));
  for (const c of clusters) {
    const r = records.get(c.name);
    c.record = { version: r?.resourceVersion ?? null, leased: r?.applying !== undefined };
  }
}

/**
 * Runs the chunk's jobs `limit` at a time; once the run is stopping no further job starts (those in hand finish). A
 * job that throws ends as `failed` and the others go on; each outcome is told (onOutcome) in its slot. While work is
 * pending (ApplyHooks.pending), no job starts: once those in hand are done it runs (`interject`), and jobs of clusters
 * it reconciled (ApplyHooks.skip) are not run.
 */
async function runPool(
  target: Target,
  jobs: readonly Job[],
  limit: number,
  hooks: ApplyHooks,
  interject: () => Promise<void>,
): Promise<{ outcomes: ClusterOutcome[]; skipped: number }> {
  const out: Array<ClusterOutcome | undefined> = new Array(jobs.length);
  let next = 0;
  let skipped = 0;
  let active = 0;
  let idle: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const pause = (): Promise<void> => {
    gate ??= (async () => {
      while (active > 0) await new Promise<void>((resolve) => (idle = resolve));
      await interject();
    })().finally(() => (gate = undefined));
    return gate;
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      if (hooks.pending?.()) await pause();
      if (next >= jobs.length || hooks.stopping?.()) return;
      const i = next++;
      if (hooks.skip?.(jobs[i]!.base.cluster)) {
        skipped++;
        continue;
      }
      active++;
      try {
        out[i] = await safely(target, jobs[i]!, hooks);
      } finally {
        active--;
        if (active === 0) idle?.();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, jobs.length)) }, worker));
  return { outcomes: out.filter((o): o is ClusterOutcome => o !== undefined), skipped };
}

/** One cluster of a chunk: what is known of it before it runs, and its run. */
interface Job {
  base: Pick<ClusterOutcome, "cluster" | "hostNamespace" | "removed" | "loaded">;
  run: () => Promise<ClusterOutcome>;
}

/**
 * A job and its telling, in the cluster's context (ApplyHooks.around); what throws ends the job as `failed`. The
 * cluster's apply lease is given up once its outcome is told (recorded), if the record did not take it back.
 */
function safely(target: Target, job: Job, hooks: ApplyHooks): Promise<ClusterOutcome> {
  const around = hooks.around ?? (<T>(_cluster: string, work: () => Promise<T>) => work());
  return around(job.base.cluster, async () => {
    const started = Date.now();
    let outcome: ClusterOutcome;
    try {
      outcome = await job.run();
    } catch (err) {
      // A failure outside the per-object handling: this cluster fails, the others go on.
      outcome = {
        ...job.base,
        state: "failed",
        error: (err as Error).message ?? String(err),
        durationMs: Date.now() - started,
      };
    }
    try {
      await hooks.onOutcome?.(outcome);
    } finally {
      // The cluster's apply lease, unless its status write gave it up (the caller records in onOutcome).
      if (outcome.state === "synced") await target.release?.(outcome.cluster).catch(() => undefined);
    }
    return outcome;
  });
}
