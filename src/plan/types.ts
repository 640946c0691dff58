// The plan: what vc would change on a target for one virtual cluster, ordered and prune-guarded (pure data).
import type { KubeObject, ObjectRef } from "../kube/object.js";

export type Action = "create" | "update" | "delete" | "unchanged";

export const ACTIONS: readonly Action[] = ["create", "update", "delete", "unchanged"];

export interface PlannedChange {
  action: Action;
  ref: ObjectRef;
  /** The object vc wants (create, update, unchanged). */
  desired?: KubeObject;
  /** The live object as read from the target (update, delete, unchanged). */
  live?: KubeObject;
  /** Unified diff of the fields vc manages, secret values masked; empty for unchanged. */
  diff?: string;
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
  /** Set when the prune guard stops the run: the message to show. Nothing of the cluster is then changed (applyPlan skips every change). */
  blocked?: string;
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
}
