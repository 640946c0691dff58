// Doctor check of Pending pods (spec section 3): which of the four causes keeps each pod from running.
import { finding, type RowKey } from "./coverage.js";
import { asPod, pendingCauses, type PendingCause } from "../../health/pod-causes.js";
import { podRef, type Check, type Finding } from "./types.js";

const ROW: Record<PendingCause, RowKey> = {
  "insufficient-resources": "pending-resources",
  "unbound-volume-claim": "pending-volume-claim",
  "image-pull": "pending-image-pull",
  "node-selector-or-taint": "pending-node-selector",
};

export const pendingPods: Check = (s) => {
  const out: Finding[] = [];
  for (const o of s.pods) {
    const pod = asPod(o);
    if (pod.status?.phase !== "Pending") continue;
    const causes = pendingCauses(s, pod);
    // A pod whose init container crash-loops is Pending too: the crash check reports that, with its cause.
    const initLooping = (pod.status?.initContainerStatuses ?? []).some(
      (cs) => cs.state?.waiting?.reason === "CrashLoopBackOff",
    );
    if (causes.length === 0 && !initLooping) {
      out.push(
        finding("pending-unreported", {
          check: "pod-pending",
          severity: "warning",
          object: podRef(pod),
          message: "Pending, cause not yet visible (no scheduling or pull failure reported)",
        }),
      );
    }
    for (const c of causes) {
      out.push(
        finding(ROW[c.cause], {
          check: "pod-pending",
          severity: "error",
          object: podRef(pod),
          message: `Pending: ${c.cause} (${c.detail})`,
        }),
      );
    }
  }
  return out;
};
