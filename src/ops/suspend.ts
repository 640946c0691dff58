// Pausing vc's reconciliation of one cluster during an operation (restore), through the reconciler's own switch.
import type { KubeObject } from "../kube/object.js";
import { resumeCluster, suspendCluster, SUSPENDED_BY_ANNOTATION } from "../records/suspend.js";
import type { Host } from "./host.js";

/**
 * The reconciler's run-time switch: annotation `vc.orch.io/suspended-by` on the cluster's status ConfigMap
 * record in the records namespace (records/store.ts), owned by field manager `vc-suspend`; while present the reconciler
 * skips the cluster.
 */
export const SUSPEND_ANNOTATION = SUSPENDED_BY_ANNOTATION;

export function suspendedBy(statusConfigMap: KubeObject | undefined): string | undefined {
  return statusConfigMap?.metadata.annotations?.[SUSPEND_ANNOTATION];
}

export async function suspend(host: Host, cluster: string, namespace: string, reason: string): Promise<void> {
  await suspendCluster(host.client, cluster, namespace, reason);
}

export async function resume(host: Host, cluster: string, namespace: string): Promise<void> {
  await resumeCluster(host.client, cluster, namespace);
}
