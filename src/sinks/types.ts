// Where a plan goes: the Target interface shared by the live host (`kube`) and hydrated manifests (`dir:PATH`).
import type { KubeObject, ObjectRef } from "../kube/object.js";
import type { ClaimIndex } from "../claims/claim-index.js";
import type { Identity } from "../host/identity.js";
import type { ClusterRecord } from "../records/record.js";
import type { StatusStore, StatusStoreOptions } from "../records/status-store.js";
import type { Claim } from "../records/store.js";

/** The target used when none is given: hydrated manifests in `./hydrated` (relative to the working directory). */
export const DEFAULT_TARGET = "dir:hydrated";

export interface WriteOptions {
  /** Ask the target to validate without persisting (server-side `dryRun=All`; dir: writes nothing). */
  dryRun: boolean;
  /**
   * The live object's resourceVersion the write was planned against: a host refuses the write (409) once the object
   * has changed since. Absent: written as it is.
   */
  resourceVersion?: string;
  /**
   * The cluster the write is for: it is fenced by the cluster's apply lease (and the run's Lease, where it has one).
   */
  cluster?: string;
}

export interface Target {
  /** Human description: "kube context test (http://127.0.0.1:1234)", "dir:out". */
  readonly description: string;
  /** Live objects vc applied for one cluster (on a host: those its record holds, read as a chunk of one). */
  listInventory(cluster: string): Promise<KubeObject[]>;
  /** Live objects vc applied for every cluster, grouped by cluster name: one LIST per kind for the whole fleet. */
  listFleetInventory(): Promise<Map<string, KubeObject[]>>;
  /**
   * The live objects of each named cluster (an empty list for one with nothing on the target): on a host one LIST per
   * kind selecting them all, kept to their records; on dir: each cluster's folder. `fresh`: a host reads them from its
   * store, not from its watch cache (a cluster planned again because another run just wrote it).
   */
  listInventories(clusters: readonly string[], opts?: { fresh?: boolean }): Promise<Map<string, KubeObject[]>>;
  /**
   * The clusters with objects on the target, sorted: on a host those this source has records of; on dir: the folders.
   */
  clusterNames(): Promise<string[]>;
  /**
   * A reader of the fleet's live objects in the order the target holds them (a host: one paged LIST per kind for the
   * whole fleet, handed out a chunk at a time), with the clusters in that order. Absent: a chunk's objects are listed
   * with the chunk (listInventories).
   */
  fleetReader?(
    clusters: readonly string[],
    known: ReadonlyMap<string, string>,
    opts?: { pageSize?: number },
  ): Promise<FleetReader>;
  /** Server-side apply of the whole object with field manager "vc", forcing conflicts; returns the live result. */
  apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject>;
  /**
   * Deletes an object vc owns. `live` (with uid) guards against deleting a different object of the same
   * name: the delete carries a uid precondition, and an object without the inventory label of `cluster`
   * is never deleted. Already gone is success.
   */
  delete(live: KubeObject, cluster: string, opts: WriteOptions): Promise<"deleted" | "gone" | "not-owned">;
  /**
   * Replaces an object whose update the server refuses (immutable fields): deletes `live` (a workload with
   * propagationPolicy=Orphan, keeping its pods and volume claims), waits until it is gone, then applies `desired`.
   * Returns notes for the person (claims expanded, or why not). A dry run changes nothing.
   */
  recreate(live: KubeObject, desired: KubeObject, opts: WriteOptions): Promise<string[]>;
  /**
   * The kinds of the list the target cannot store (a host without the mesh CRDs); discovery answers are cached per run.
   */
  missingKinds(
    kinds: ReadonlyArray<{ apiVersion: string; kind: string }>,
  ): Promise<Array<{ apiVersion: string; kind: string }>>;
  /**
   * The public-host claims of the mesh objects vc wrote (a host: those its records hold; dir: the folder's manifests),
   * indexed by host (claims/claim-index.ts). Absent: only the run's own claims are checked among themselves.
   */
  hostClaimIndex?(): Promise<ClaimIndex>;
  /**
   * Who writes to the target: the host's confirmation for a live host (else the kubeconfig's claim), the local account
   * for a folder.
   */
  actor(): Promise<Identity>;
  /** Where the target keeps each cluster's status and history: vc's records on a host, files in a dir: folder. */
  statusStore(opts?: StatusStoreOptions): StatusStore;
  /**
   * Starts a unit of work (a run, a chunk of a run): the target's records are read afresh and then once for the unit;
   * `fleet`: every record at once; `forgetClaims`: the public-host claims read before are read again.
   */
  startUnit?(opts?: { fleet?: boolean; forgetClaims?: boolean }): void;
  /** Ends the unit of work: every read asks again. */
  endUnit?(): void;
  /** Whether a unit of work is on. */
  readonly unitOpen?: boolean;
  /** The records this run reads, by cluster (of `only` when given): a target that keeps records. */
  recordsByCluster?(only?: readonly string[]): Promise<Map<string, ClusterRecord>>;
  /** Where the target keeps its records (a host's records namespace). */
  readonly recordsNamespace?: string;
  /**
   * The source whose records this run reads and writes (its owner name; "" without one), on a target that keeps
   * records.
   */
  source?: string;
  /**
   * The clusters vc applied before it kept records (a host: an inventory-labelled Namespace each), with their host
   * namespace.
   */
  legacyClusters?(): Promise<Array<{ cluster: string; hostNamespace: string }>>;
  /**
   * Moves what vc kept in host namespaces before records into records (a host), for those of `clusters` without a
   * record; a dry run keeps them in memory for the plan. One line per migrated cluster, to tell.
   */
  migrateRecords?(
    clusters: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
    opts: { dryRun?: boolean; historyLimit?: number },
  ): Promise<Array<{ cluster: string; hostNamespace: string; message: string }>>;
  /**
   * The clusters (`<host namespace>/<cluster>`) the host's shared metrics proxy is ready to take over from their own
   * proxy of before (its status ConfigMap, model/proxy-status.ts). Absent where a target has no host (dir:).
   */
  metricsProxyReady?(): Promise<ReadonlySet<string>>;
  /** Releases connections. */
  close(): Promise<void>;
  /** Where the target tells what it did instead of what it was asked (a read past its bound); a host: stderr. */
  tell?: (message: string) => void;
  /**
   * The form a desired object takes in this target, applied before planning (so a plan compares like with
   * like): the dir: target withholds inline credentials. Absent: objects go as rendered.
   */
  prepare?(obj: KubeObject): KubeObject;
  /**
   * Set by a target that keeps records (a live host): the inventories it lists are the records' (records/store.ts), and
   * plans on it decide by them, never by labels.
   */
  readonly recorded?: boolean;
  /** Records the keys (objectKey) of the objects vc now holds for a cluster, after a run changed them. */
  recordInventory?(cluster: string, hostNamespace: string, keys: Iterable<string>): Promise<void>;
  /**
   * Takes the cluster's apply lease before its objects are written (a host: an annotation of its record), by
   * compare-and-swap on `basedOn`, the record the plan was computed against (Plan.recordVersion), putting `add` on the
   * record's inventory in the same write. "stale": the record changed since (plan again); "busy": another run's lease
   * is live (after waiting up to `waitMs`). Writes of the cluster are fenced by the lease until its status is written
   * or release() gives it up.
   */
  claim?(
    cluster: string,
    hostNamespace: string,
    opts: {
      basedOn: string | null;
      add: readonly string[];
      run: { via: string; revision?: string };
      waitMs?: number;
      onWait?: (holder: string) => void;
    },
  ): Promise<Claim>;
  /** Gives up the cluster's apply lease when this run still holds it (nothing else to record). */
  release?(cluster: string): Promise<void>;
  /**
   * One object as the target holds it now (not from a cache), or undefined: what a refused write is planned again on.
   */
  readObject?(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** True while the cluster's record this run reads is not written yet (a migration kept in memory, a hand-over). */
  unwrittenRecord?(cluster: string): boolean;
  /**
   * The objects among `refs` that exist on the target although the cluster's record does not hold them (keys of
   * taken-over objects excepted: those are returned in `taken`), each with its live form.
   */
  existingUnrecorded?(
    cluster: string,
    refs: readonly ObjectRef[],
  ): Promise<{ foreign: KubeObject[]; taken: KubeObject[] }>;
  /**
   * Takes the named objects (`Kind/namespace/name`, `Kind/name` cluster-scoped) into this run's clusters' records even
   * though they exist outside them (`vc adopt --take-ownership`): a target that keeps records.
   */
  takeOwnership?(names: readonly string[]): void;
  /**
   * Starts handing a cluster over from source `from` (`vc adopt --from`): its record (inventory, status, older history)
   * becomes this source's for the run. A target that keeps records.
   */
  beginHandOver?(cluster: string, from: string, opts: { dryRun: boolean }): Promise<void>;
  /** Ends a hand-over once the run is recorded: source `from`'s record of the cluster is removed. */
  endHandOver?(cluster: string, from: string): Promise<void>;
  /**
   * The clusters among `claims` that an older record holds for someone else: another source's record of the same
   * cluster or host namespace, or another cluster of this source in the same host namespace (cluster -> why, and the
   * other sources holding it). Sources in `adoptFrom` are being taken over and hold nothing.
   */
  heldElsewhere?(
    claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
    adoptFrom?: readonly string[],
  ): Promise<Map<string, { message: string; sources: string[] }>>;
}

/** The fleet's live objects handed out a chunk at a time (Target.fleetReader). */
export interface FleetReader {
  /** The clusters in the order the reader hands them out best. */
  order: string[];
  /** The live objects of the named clusters, let go by the reader. */
  take(clusters: readonly string[]): Promise<Map<string, KubeObject[]>>;
  /** Why the reader went back to reading a chunk at a time, once it has. */
  readonly fellBack: string | undefined;
}

/**
 * A fleet reader found the target listing out of its own order: a chunk may have been handed out short of an object.
 */
export class ReadOrderError extends Error {}
