// The health vocabulary shared by objects and clusters: Healthy, Progressing, Degraded, Unknown, with the first reason.

/**
 * How an object or a cluster is doing on the host (kstatus semantics: Current → Healthy, InProgress → Progressing,
 * Failed → Degraded).
 */
export type HealthStatus = "Healthy" | "Progressing" | "Degraded" | "Unknown";

export const HEALTH_STATUSES: readonly HealthStatus[] = ["Healthy", "Progressing", "Degraded", "Unknown"];

export interface Health {
  status: HealthStatus;
  /**
   * Why it is not Healthy (absent when Healthy): `pod shop-0 CrashLoopBackOff`, `StatefulSet vc-shop/shop: ready 0/1`.
   */
  reason?: string;
}

/** The health of one live object (or pod), named `Kind namespace/name`. */
export interface ObjectHealth extends Health {
  object: string;
}

export interface ClusterHealth extends Health {
  /** Every object looked at, in the order the cluster's objects are applied, then pods by name. */
  objects: ObjectHealth[];
}

/** Order of precedence when objects disagree: the worst wins (a Degraded object makes the cluster Degraded). */
const RANK: Record<HealthStatus, number> = { Healthy: 0, Progressing: 1, Unknown: 2, Degraded: 3 };

export function worse(a: HealthStatus, b: HealthStatus): boolean {
  return RANK[a] > RANK[b];
}

/** `Kind namespace/name`, or `Kind name` for a cluster-scoped object. */
export function objectName(o: { kind: string; metadata: { name: string; namespace?: string } }): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
}
