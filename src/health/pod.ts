// Health of a pod of the cluster (pure), with what `vc doctor` knows of pod states: crash loops, image pulls,
// scheduling.
import type { KubeObject } from "../kube/object.js";
import { asPod, pendingCauses } from "./pod-causes.js";
import type { Health } from "../model/health.js";

/**
 * Waiting reasons that do not clear by themselves: the pod needs a change (image, config, command) or a fix elsewhere.
 */
const STUCK_WAITING = new Set([
  "CrashLoopBackOff",
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

/**
 * A pod's health: Degraded with `pod NAME REASON` when a container is stuck (CrashLoopBackOff, image pull, config), the
 * pod failed, or the scheduler reported it unschedulable (with doctor's cause); Progressing while it starts; Healthy
 * when Running and Ready (or Succeeded). `events` and `claims` are the namespace's, for the causes of a Pending pod.
 */
export function podHealth(o: KubeObject, events: KubeObject[] = [], claims: KubeObject[] = []): Health {
  const pod = asPod(o);
  const name = pod.metadata.name;
  if (o.metadata.deletionTimestamp) return { status: "Progressing", reason: `pod ${name} terminating` };
  const st = pod.status ?? {};
  for (const cs of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) {
    const waiting = cs.state?.waiting?.reason;
    if (waiting && STUCK_WAITING.has(waiting)) return { status: "Degraded", reason: `pod ${name} ${waiting}` };
  }
  if (st.phase === "Failed") return { status: "Degraded", reason: `pod ${name} Failed` };
  if (st.phase === "Succeeded") return { status: "Healthy" };
  if (st.phase === "Pending") {
    const scheduled = st.conditions?.find((c) => c.type === "PodScheduled");
    if (scheduled?.status === "False" && scheduled.reason === "Unschedulable") {
      const cause = pendingCauses({ events, pvcs: claims }, pod)[0];
      return {
        status: "Degraded",
        reason: `pod ${name} Unschedulable${cause ? ` (${cause.cause}: ${cause.detail})` : ""}`,
      };
    }
    return { status: "Progressing", reason: `pod ${name} Pending` };
  }
  const ready = st.conditions?.find((c) => c.type === "Ready");
  if (st.phase === "Running" && (ready === undefined || ready.status === "True")) return { status: "Healthy" };
  return { status: "Progressing", reason: `pod ${name} not ready` };
}
