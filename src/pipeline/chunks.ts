// A run's fleet a chunk at a time: each chunk's folders loaded, validated and rendered (the next one ahead of the one
// in hand), its live objects read, and its clusters made into units of work; the clusters whose folder is gone last.
import type { KubeObject } from "../kube/object.js";
import type { ClusterError, SuspendedCluster } from "../plan/format.js";
import { otherOwners } from "../plan/owner.js";
import { holdersOf } from "../records/holders.js";
import type { FleetReader, Target } from "../sinks/types.js";
import { chunksOf } from "../util/pool.js";
import type { FleetCluster, Held } from "./cluster.js";
import { attribute, defaultEngine, loadIsolated, type Engine, type LoadedCluster } from "./engine.js";
import { renderLoaded, type DesiredIndex, type DesiredState } from "./load.js";

/** Clusters per chunk: 100 keeps a LIST's selector near 2 KB and a chunk's objects to a few thousand. */
export const INVENTORY_CHUNK = 100;

/** What every run of the fleet is asked to do. */
export interface FleetOptions {
  /** Delete what is no longer desired (clusters whose cluster.yaml says `prune: false` are never pruned). */
  prune: boolean;
  allowMassPrune: boolean;
  /**
   * Recreate objects whose change the server refuses in place, in every cluster (clusters with cluster.yaml `force:
   * true` always do).
   */
  force?: boolean;
  /** Clusters named by the user: only they (and those of them that are gone from the repository) are run. */
  selected?: string[];
  /**
   * This source's owner name (plan/owner.ts): recorded on every object, and clusters another source owns are left
   * alone.
   */
  owner?: string;
  /** Owners whose clusters this run takes over (`vc adopt --from`). */
  adoptFrom?: string[];
  /**
   * Clusters of the repository suspended at run time (cluster -> who and why, pipeline/run-suspension.ts): neither
   * planned nor applied.
   */
  suspendedAtRunTime?: ReadonlyMap<string, string>;
}

/** A rollout's hold on the clusters it loads (src/rollout/driver.ts PassRollout). */
interface ChunkPins {
  /** The `bases` load option for these clusters: the snapshot folder of each cluster pinned to an older base. */
  basesFor(names: readonly string[]): Promise<Record<string, string>>;
  /** Sets each loaded cluster's pin; `reload` loads clusters again over the newest base. */
  annotate(loaded: LoadedCluster[], reload: (names: string[]) => Promise<LoadedCluster[]>): Promise<void>;
}

/** How a run goes through the fleet. */
export interface ChunkOptions {
  engine?: Engine;
  /** Clusters loaded, planned and let go together (default INVENTORY_CHUNK). */
  chunkSize?: number;
  /**
   * The repository's clusters to run, in order (default: the index's valid ones, then those contesting a namespace).
   */
  names?: readonly string[];
  /** Clusters whose folder is gone, run after the repository's (default: those on the target the repository lacks). */
  removed?: readonly string[];
  /** A running rollout's pins. */
  pins?: ChunkPins;
  /** Hands out the fleet's live objects in the target's order (Target.fleetReader); else each chunk lists its own. */
  reader?: FleetReader;
  /**
   * Called between chunks: work that must not wait for the run (a commit's changed clusters) goes there. Returns the
   * revision that work reached, which the rest of the run follows; undefined when none ran.
   */
  betweenChunks?: () => Promise<string | undefined>;
  /** True once the run is stopping: no further chunk is started. */
  stopping?: () => boolean;
  /**
   * Clusters the run leaves out when it reaches them (the reconciler's: reconciled by changes run between chunks, at
   * the revision the run follows). Asked as each chunk is loaded, and again after `betweenChunks`.
   */
  skip?: (name: string) => boolean;
  /** The removed clusters go in name order among the repository's, not after them. */
  interleave?: boolean;
  /** Each chunk is a unit of work of its own (Target.startUnit): its records read afresh, with its live objects. */
  unitPerChunk?: boolean;
  /** Each loaded folder carries the digest of its validation inputs (LoadedCluster.digest): for runs that record it. */
  digests?: boolean;
  /** Told of a fall-back worth a log line (a chunk loaded folder by folder). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/** One chunk of a run. */
export interface Chunk {
  /** The chunk's clusters, the repository's and the removed ones. */
  names: string[];
  /** The repository's clusters of the chunk as loaded (empty for a chunk of removed clusters). */
  loaded: LoadedCluster[];
  /** The chunk's valid clusters rendered; `errors` the chunk's own (its folders', not the repository's). */
  desired: DesiredState;
  /** The clusters of the chunk whose folder is gone. */
  removed: string[];
  /** The live objects of the chunk's clusters. */
  live: Map<string, KubeObject[]>;
  /** Clusters contesting a namespace whose record holds it on the host: valid for this run. */
  admitted: string[];
  /** The clusters of the chunk the run left out (ChunkOptions.skip): neither loaded nor run. */
  skipped: string[];
  /**
   * Runs the work between chunks now, in the middle of this chunk (ChunkOptions.betweenChunks): the next chunk is then
   * loaded again if the revision moved or it holds clusters that work reconciled.
   */
  interject: () => Promise<void>;
}

/** The clusters a run goes through by default: the index's valid ones, then those contesting a namespace, in order. */
export function runNames(index: DesiredIndex): string[] {
  return [...index.valid, ...index.contested].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The clusters whose folder is gone: named and without a folder (a selection), or on the target and not in the
 * repository (when pruning, or `always`: a plan reports them).
 */
export async function removedClusters(
  target: Target,
  index: DesiredIndex,
  opts: FleetOptions,
  always: boolean,
): Promise<string[]> {
  if (opts.selected?.length) return [...index.state.missing];
  if (!opts.prune && !always) return [];
  return (await target.clusterNames()).filter((n) => !index.state.known.has(n));
}

/**
 * The run's chunks, in order: the repository's clusters then the removed ones (or, `interleave`, all in name order),
 * each chunk's folders loaded, validated and rendered one chunk ahead of the one handed out, its live objects read as
 * it is handed out. Between chunks `betweenChunks` runs and a stop ends the run; the revision it reached is the one the
 * later chunks load.
 */
export async function* fleetChunks(target: Target, index: DesiredIndex, opts: ChunkOptions): AsyncGenerator<Chunk> {
  const present = opts.reader?.order ?? opts.names ?? runNames(index);
  const removed = opts.removed ?? [];
  const gone = new Set(removed);
  const size = opts.chunkSize ?? INVENTORY_CHUNK;
  const groups = opts.interleave
    ? chunksOf(
        [...present, ...removed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        size,
      )
    : [...chunksOf(present, size), ...chunksOf(removed, size)];
  const state = index.state;
  let revision = state.revision;
  const skipped = (i: number): string[] => (opts.skip ? groups[i]!.filter((n) => opts.skip!(n)) : []);
  const interject = async (): Promise<void> => {
    const moved = await opts.betweenChunks?.();
    if (moved !== undefined) revision = moved;
  };
  // Chunk k+1 loads while the caller works on chunk k; a load that fails is thrown where the caller reaches it.
  const start = (i: number) => {
    if (i >= groups.length) return undefined;
    const left = skipped(i);
    const names = groups[i]!.filter((n) => !gone.has(n) && !left.includes(n));
    const p =
      names.length > 0
        ? loadChunk(target, { ...index, state: { ...state, revision } }, names, opts)
        : Promise.resolve(noneLoaded({ ...state, revision }));
    p.catch(() => undefined);
    return { p, skipped: left, revision };
  };
  let next = start(0);
  for (let i = 0; i < groups.length; i++) {
    if (i > 0) {
      await interject();
      // The repository moved since the chunk loaded ahead was (it is of the old revision), or the work between chunks
      // reconciled clusters of it (it would apply what they were before the change): loaded again.
      if (next!.revision !== revision || skipped(i).join() !== next!.skipped.join()) next = start(i);
      if (opts.stopping?.()) return;
    }
    const ahead = next!;
    const loaded = await ahead.p;
    next = start(i + 1);
    if (opts.unitPerChunk) target.startUnit?.();
    const names = groups[i]!.filter((n) => !ahead.skipped.includes(n));
    const chunkRemoved = names.filter((n) => gone.has(n));
    const live =
      names.length === 0
        ? new Map<string, KubeObject[]>()
        : opts.reader && chunkRemoved.length === 0
          ? await opts.reader.take(names)
          : await target.listInventories(names);
    const missing = chunkRemoved.filter((n) => state.missing.includes(n));
    yield {
      ...loaded,
      names,
      desired: { ...loaded.desired, revision, missing },
      removed: chunkRemoved,
      live,
      skipped: ahead.skipped,
      interject,
    };
  }
}

/** A chunk with no folder to load (only removed clusters). */
function noneLoaded(state: DesiredState): Omit<Chunk, "names" | "removed" | "live" | "skipped" | "interject"> {
  return { loaded: [], desired: { ...state, clusters: [], errors: [], missing: [] }, admitted: [] };
}

/**
 * Loads, validates and renders a chunk: pinned by a rollout, contested folders whose record holds the namespace
 * admitted.
 */
async function loadChunk(
  target: Target,
  index: DesiredIndex,
  names: string[],
  opts: ChunkOptions,
): Promise<Omit<Chunk, "names" | "removed" | "live" | "skipped" | "interject">> {
  const engine = opts.engine ?? defaultEngine;
  const { root, revision } = index.state;
  const bases = opts.pins ? await opts.pins.basesFor(names) : index.state.bases;
  const res = await loadIsolated(
    engine,
    root,
    names,
    { namespaceClaims: index.claims, ...(bases ? { bases } : {}), ...(opts.digests ? { validated: true } : {}) },
    opts.warn,
  );
  const loaded = attribute(res);
  await opts.pins?.annotate(loaded, async (n) =>
    attribute(await loadIsolated(engine, root, n, { namespaceClaims: index.claims }, opts.warn)),
  );
  const admitted = await admitHolders(target, loaded, opts.warn);
  const desired = await renderLoaded(engine, { ...res, clusters: loaded }, root, revision);
  return { loaded, desired: { ...desired, known: index.state.known, missing: [] }, admitted };
}

/**
 * Two folders claiming one host namespace: the one whose record holds the namespace on the host is valid again (the
 * newcomer stays refused, with its error). A failure to read the records leaves both refused.
 */
async function admitHolders(target: Target, loaded: LoadedCluster[], warn: ChunkOptions["warn"]): Promise<string[]> {
  const contested = loaded
    .filter((c) => !c.spec && c.contested)
    .map((c) => ({ name: c.name, hostNamespace: c.contested!.settings.namespace, loaded: c }));
  if (contested.length === 0 || !target.recordsByCluster) return [];
  try {
    const admitted = holdersOf(contested, await target.recordsByCluster(contested.map((c) => c.name)));
    for (const a of admitted) {
      a.loaded.spec = a.loaded.contested;
      a.loaded.diagnostics = a.loaded.diagnostics.filter((d) => d.code !== "namespace-conflict");
    }
    return admitted.map((a) => a.name);
  } catch (err) {
    warn?.("cannot read the records of clusters claiming one namespace: both stay refused", {
      error: (err as Error).message,
    });
    return [];
  }
}

/** The desired state in the form the target stores it (Target.prepare), so that plans compare like with like. */
export function preparedFor(target: Target, desired: DesiredState): DesiredState {
  const prepare = target.prepare?.bind(target);
  if (!prepare) return desired;
  return { ...desired, clusters: desired.clusters.map((c) => ({ ...c, objects: c.objects.map(prepare) })) };
}

/** The clusters of a chunk another source's record holds (Target.heldElsewhere; none on a target without records). */
export async function heldInChunk(
  target: Target,
  desired: DesiredState,
  opts: FleetOptions,
): Promise<ReadonlyMap<string, Held> | undefined> {
  if (!target.recorded || !target.heldElsewhere) return undefined;
  const claims = desired.clusters.map((c) => ({
    cluster: c.name,
    hostNamespace: desired.known.get(c.name) ?? c.hostNamespace,
  }));
  return claims.length === 0 ? undefined : target.heldElsewhere(claims, opts.adoptFrom);
}

/**
 * The units of a chunk: its valid clusters, plus (when pruning) removed ones that still have live objects (`forget`:
 * every removed one, so that a record of nothing live is forgotten too). Named clusters with no folder that cannot be
 * pruned are errors.
 */
export function fleetClusters(
  desired: DesiredState,
  live: Map<string, KubeObject[]>,
  opts: FleetOptions & { recorded?: boolean; forget?: boolean },
  removed?: readonly string[],
): { clusters: FleetCluster[]; errors: ClusterError[] } {
  const clusters: FleetCluster[] = desired.clusters.map((c) => ({
    name: c.name,
    desired: c.objects,
    live: live.get(c.name) ?? [],
    prune: opts.prune && c.prune,
    suspend: c.suspend,
    force: !!opts.force || c.force,
    removed: false,
    hostNamespace: desired.known.get(c.name),
  }));
  const errors: ClusterError[] = [];
  const selected = opts.selected?.length ? new Set(opts.selected) : undefined;
  const gone = removed ?? [...live.keys()].filter((n) => !desired.known.has(n));
  for (const name of [...gone].sort()) {
    const objs = live.get(name) ?? [];
    if (desired.known.has(name) || (selected && !selected.has(name)) || (objs.length === 0 && !opts.forget)) continue;
    // A cluster of another source that this repository does not have is simply not ours: not removed, not reported.
    if (
      opts.owner !== undefined &&
      !opts.recorded &&
      objs.length > 0 &&
      ownedElsewhere(objs, opts.owner, opts.adoptFrom)
    )
      continue;
    if (opts.prune)
      clusters.push({ name, desired: [], live: objs, prune: true, suspend: false, force: false, removed: true });
  }
  for (const name of desired.missing) {
    const objs = live.get(name) ?? [];
    if (objs.length === 0)
      errors.push({ cluster: name, message: `no cluster folder clusters/${name}, and nothing of it is live` });
    else if (objs.every(isNamespace))
      errors.push({
        cluster: name,
        message:
          `no cluster folder clusters/${name}; only its kept Namespace ` +
          `${objs.map((o) => o.metadata.name).join(", ")} is left (delete it by hand once it is empty)`,
      });
    else if (!opts.prune)
      errors.push({
        cluster: name,
        message: `no cluster folder clusters/${name}; its ${objs.length} live objects stay until you run with --prune`,
      });
  }
  return { clusters, errors };
}

function isNamespace(obj: KubeObject): boolean {
  return obj.kind === "Namespace" && obj.apiVersion === "v1";
}

/** True when every live object of a cluster carries the owner label of another source. */
function ownedElsewhere(objs: readonly KubeObject[], owner: string, adoptFrom: readonly string[] = []): boolean {
  return objs.every((o) => otherOwners([o], owner, new Set(adoptFrom)).length > 0);
}

/** Sets aside the clusters suspended at run time: they are neither planned nor applied (nor pruned). */
export function setAsideSuspended(
  clusters: FleetCluster[],
  opts: FleetOptions,
): { clusters: FleetCluster[]; suspendedAtRunTime: SuspendedCluster[] } {
  const rest: FleetCluster[] = [];
  const suspendedAtRunTime: SuspendedCluster[] = [];
  for (const c of clusters) {
    const by = opts.suspendedAtRunTime?.get(c.name);
    if (by === undefined) rest.push(c);
    else suspendedAtRunTime.push({ cluster: c.name, by });
  }
  return { clusters: rest, suspendedAtRunTime };
}

/** The public hosts each cluster of the run claims, from the index: the clusters that will be planned and synced. */
export function runPeers(index: DesiredIndex, names: readonly string[], opts: FleetOptions): Map<string, string[]> {
  const peers = new Map<string, string[]>();
  for (const name of names) {
    const hosts = index.hosts.get(name);
    if (!hosts || index.suspended.has(name) || opts.suspendedAtRunTime?.has(name)) continue;
    peers.set(name, hosts);
  }
  return peers;
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
