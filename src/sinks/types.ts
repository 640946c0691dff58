// Where a plan goes: the Target interface shared by the live host (`kube`) and hydrated manifests (`dir:PATH`).
import type { KubeObject, ObjectRef } from "../kube/object.js";
import type { ClaimIndex } from "../claims/claim-index.js";
import type { StatusStore, StatusStoreOptions } from "../records/status-store.js";

/** The target used when none is given: hydrated manifests in `./hydrated` (relative to the working directory). */
export const DEFAULT_TARGET = "dir:hydrated";

export interface WriteOptions {
  /** Ask the target to validate without persisting (server-side `dryRun=All`; dir: writes nothing). */
  dryRun: boolean;
}

export interface Target {
  /** Human description: "kube context test (http://127.0.0.1:1234)", "dir:out". */
  readonly description: string;
  /**
   * Live objects vc applied for one cluster: label-selected LISTs by the inventory label, one per kind
   * (namespaced kinds in `hostNamespace` when given, else across namespaces). Never one request per object.
   */
  listInventory(cluster: string, hostNamespace?: string): Promise<KubeObject[]>;
  /** Live objects vc applied for every cluster, grouped by cluster name: one LIST per kind for the whole fleet. */
  listFleetInventory(): Promise<Map<string, KubeObject[]>>;
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
  /** The kinds of the list the target cannot store (a host without the mesh CRDs); discovery answers are cached per run. */
  missingKinds(kinds: ReadonlyArray<{ apiVersion: string; kind: string }>): Promise<Array<{ apiVersion: string; kind: string }>>;
  /**
   * The public-host claims of the live mesh objects vc applied (Gateways, VirtualServices, across namespaces: one LIST
   * per kind), indexed by host (claims/claim-index.ts). Absent where a target cannot tell (dir:); then claims are not
   * checked against the host.
   */
  hostClaimIndex?(): Promise<ClaimIndex>;
  /** Where the target keeps each cluster's status and history: vc's records on a host, files in a dir: folder. */
  statusStore(opts?: StatusStoreOptions): StatusStore;
  /** Releases connections. */
  close(): Promise<void>;
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
  /** True while the cluster's record this run reads is not written yet (a migration kept in memory, a hand-over). */
  unwrittenRecord?(cluster: string): boolean;
  /**
   * The objects among `refs` that exist on the target although the cluster's record does not hold them (keys of
   * taken-over objects excepted: those are returned in `taken`), each with its live form.
   */
  existingUnrecorded?(cluster: string, refs: readonly ObjectRef[]): Promise<{ foreign: KubeObject[]; taken: KubeObject[] }>;
  /**
   * The clusters among `claims` that an older record holds for someone else: another source's record of the same
   * cluster or host namespace, or another cluster of this source in the same host namespace (cluster -> why, and the
   * other sources holding it). Sources in `adoptFrom` are being taken over and hold nothing.
   */
  heldElsewhere?(claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>, adoptFrom?: readonly string[]): Promise<Map<string, { message: string; sources: string[] }>>;
}

export interface OpenTargetOptions {
  kubeconfig?: string;
  context?: string;
}

export type { KubeObject, ObjectRef };

// ---- syncing a cluster (src/pipeline/sync.ts): plan + apply, shared by `vc apply` and the reconciler ----

import type { Action, Plan } from "../plan/types.js";

export type Outcome = "created" | "updated" | "deleted" | "unchanged" | "failed" | "skipped";

export const OUTCOMES: readonly Outcome[] = ["created", "updated", "deleted", "unchanged", "failed", "skipped"];

export interface ObjectResult {
  ref: ObjectRef;
  action: Action;
  outcome: Outcome;
  /** Why it failed or was skipped. */
  message?: string;
  /**
   * False for a dry-run create the server could not check: its namespace does not exist yet (this run would create
   * it), so the server answers NotFound for anything in it.
   */
  checked?: false;
}

export interface SyncInput {
  cluster: string;
  hostNamespace: string;
  /** The rendered objects; each carries the inventory label of `cluster`. */
  desired: KubeObject[];
  /** Live inventory already read (from listFleetInventory); when absent, syncCluster lists it. */
  live?: KubeObject[];
}

export interface SyncOptions {
  prune: boolean;
  dryRun: boolean;
  allowMassPrune: boolean;
  /** Recreate objects whose update the server refuses (immutable fields) instead of blocking the cluster. */
  force?: boolean;
  /** Writes in flight at once within one ordering stage (default 8). */
  concurrency?: number;
  /** Called after each object is done (progress of long runs). */
  onProgress?: (done: number, total: number, result: ObjectResult) => void;
  /** This source's owner name: recorded on every object; a cluster another source owns is blocked (plan.ownerConflict). */
  owner?: string;
  /** The public hosts other clusters of the same run claim (claims/host-claims.ts runClaims). */
  peers?: ReadonlyMap<string, readonly string[]>;
  /** How `peers` that nobody holds live are decided (default "refuse-all"; the reconciler's pass uses "first-name"). */
  peerTies?: "refuse-all" | "first-name";
}

export interface SyncResult {
  cluster: string;
  plan: Plan;
  results: ObjectResult[];
  counts: Record<Outcome, number>;
  /** No object failed and the prune guard did not stop the run (`plan.blocked` then says why). */
  ok: boolean;
  durationMs: number;
}
