// The plan: what vc would change on a target for one virtual cluster, ordered and prune-guarded (pure data).
import type { KubeObject, ObjectRef } from "../kube/object.js";

export type Action = "create" | "update" | "delete" | "unchanged";

export interface PlannedChange {
  action: Action;
  ref: ObjectRef;
  /** The object vc wants (create, update, unchanged). */
  desired?: KubeObject;
  /** The live object as read from the target (update, delete, unchanged). */
  live?: KubeObject;
  /**
   * The live object's resourceVersion the change was planned against (update, delete, unchanged): the write carries
   * it, so that the server refuses it (409) once the object has changed since, and the change is planned again.
   */
  resourceVersion?: string;
  /**
   * What the change is as the fleet summary says it (plan/fleet-summary.ts), kept where `desired` and `live` are let go
   * (a streamed report).
   */
  summary?: string;
  /** Unified diff of the fields vc manages, secret values masked; empty for unchanged. */
  diff?: string;
  /** An update the API server would refuse in place: the immutable fields it changes (see plan/immutable.ts). */
  immutable?: string[];
  /** Allowed by force: vc deletes the live object (orphaning a workload's pods and claims) and creates it anew. */
  recreate?: boolean;
}

export interface Plan {
  cluster: string;
  /** Applies first (namespaces, RBAC, config, workloads, mesh), then deletes in reverse order. */
  changes: PlannedChange[];
  counts: Record<Action, number>;
  /**
   * Objects of the inventory that are no longer desired but that prune keeps on purpose (namespaces: deleting one
   * would delete what vc does not own in it — the control plane's volume claims, syncer-created pods, other tools'
   * objects). Shown so that a person can remove them once they are empty.
   */
  retained?: Array<{ ref: ObjectRef; reason: string }>;
  /**
   * Set when the plan must not be applied: the prune guard stops it, or an update changes immutable fields without
   * force. The message to show; nothing of the cluster is then changed (applyPlan skips every change).
   */
  blocked?: string;
  /** Kinds the plan writes that the host does not serve (`apiVersion/Kind`): set with `blocked`. */
  unserved?: string[];
  /** Other sources whose owner label the cluster's live objects carry: set with `blocked`, and the plan is empty. */
  ownerConflict?: string[];
  /**
   * Public hosts the cluster claims that an older claim of another cluster holds (claims/host-claims.ts): set with
   * `blocked`.
   */
  hostClaims?: string[];
  /** Keys (objectKey) of the live objects the plan started from: the cluster's recorded inventory on a live host. */
  inventory?: string[];
  /** The cluster's host namespace, where the fleet knows it (the record keeps it). */
  hostNamespace?: string;
  /**
   * On a target that keeps records: the resourceVersion of the cluster's record the plan was computed against (null: it
   * had none). The first write of the run compares and swaps on it: a record changed since (another run) is planned
   * again, never written over.
   */
  recordVersion?: string | null;
  /** The record showed a run writing the cluster (or one that never ended): the run takes it over or waits. */
  recordLeased?: boolean;
  /**
   * Objects vc would create that already exist on the host without being in the cluster's record: never written
   * nor pruned (set with `blocked`); `managers` are the field managers of the live object (managedFields).
   */
  conflicts?: Array<{ ref: ObjectRef; managers: string[] }>;
}

export interface PlanOptions {
  /** Delete live objects of the cluster's inventory that are no longer desired. */
  prune: boolean;
  /** Let prune delete more than half (or all) of the cluster's live objects. */
  allowMassPrune: boolean;
  /**
   * Ignore a difference in the `vc.orch.io/revision` annotation alone (default true): an object whose
   * content did not change keeps the revision that last changed it, and a new commit costs no writes.
   */
  ignoreRevisionOnly?: boolean;
  /**
   * Recreate objects whose update the API server would refuse (immutable fields), as `kubectl apply --force` and
   * Flux's `force` do; without it such a plan is blocked. From `vc apply --force` or cluster.yaml `force: true`.
   */
  force?: boolean;
  /**
   * The owner name of this source (model/owner.ts): every desired object gets it as a label, and a cluster whose
   * live objects carry another owner is not planned at all (blocked, `ownerConflict`). Prune keeps live objects
   * without an owner label. Absent: ownership is neither recorded nor checked.
   */
  owner?: string;
  /** Owners whose objects this run takes over (`vc adopt --from`): treated as this source's, unowned ones too. */
  adoptFrom?: string[];
  /**
   * `live` is the cluster's recorded inventory (a live host with records): the record, not the owner labels the live
   * objects carry, says what is vc's, so labels neither block the cluster nor keep an object from prune.
   */
  recorded?: boolean;
}

// ---- carrying out a plan (pipeline/apply.ts): what happened to each change ----

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

export interface SyncResult {
  cluster: string;
  plan: Plan;
  results: ObjectResult[];
  counts: Record<Outcome, number>;
  /** No object failed and the prune guard did not stop the run (`plan.blocked` then says why). */
  ok: boolean;
  durationMs: number;
}
