// The control plane's state as `vc list` and `vc describe` show it: running, pending, scaled down, restoring, absent.
import type { KubeObject } from "../kube/object.js";
import { suspendedBy } from "./suspend.js";

export type ControlPlaneState = "running" | "pending" | "scaled down" | "restoring" | "absent";

export interface ControlPlaneInfo {
  state: ControlPlaneState;
  desired: number;
  ready: number;
}

interface PodStatus {
  phase?: string;
  conditions?: Array<{ type: string; status: string }>;
}

function isReady(pod: KubeObject): boolean {
  const st = pod.status as PodStatus | undefined;
  return (
    st?.phase === "Running" &&
    (st.conditions === undefined || st.conditions.some((c) => c.type === "Ready" && c.status === "True"))
  );
}

/**
 * Pure: from the StatefulSet, its pods, the restore pod (if any) and the status ConfigMap (or who suspended the
 * cluster, as the status store reads it).
 */
export function controlPlaneState(
  sts: KubeObject | undefined,
  pods: KubeObject[],
  restorePod: KubeObject | undefined,
  statusConfigMap: KubeObject | string | undefined,
): ControlPlaneInfo {
  const desired = (sts?.spec as { replicas?: number } | undefined)?.replicas ?? (sts ? 1 : 0);
  const ready = pods.filter(isReady).length;
  const restorePhase = (restorePod?.status as PodStatus | undefined)?.phase;
  const restoring =
    (restorePod && restorePhase !== "Succeeded" && restorePhase !== "Failed") ||
    /\brestore\b/.test((typeof statusConfigMap === "string" ? statusConfigMap : suspendedBy(statusConfigMap)) ?? "");
  let state: ControlPlaneState;
  if (restoring) state = "restoring";
  else if (!sts) state = "absent";
  else if (desired === 0) state = "scaled down";
  else state = ready >= desired ? "running" : "pending";
  return { state, desired, ready };
}
