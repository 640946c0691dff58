// Doctor check of Pending pods (spec section 3): which of the four causes keeps each pod from running.
import { finding, type RowKey } from "./coverage.js";
import { eventsAbout } from "./facts.js";
import { asPod, podRef, type Check, type Finding, type HostSnapshot, type PodLike } from "./types.js";

export type PendingCause = "insufficient-resources" | "unbound-volume-claim" | "image-pull" | "node-selector-or-taint";

const ROW: Record<PendingCause, RowKey> = {
  "insufficient-resources": "pending-resources",
  "unbound-volume-claim": "pending-volume-claim",
  "image-pull": "pending-image-pull",
  "node-selector-or-taint": "pending-node-selector",
};

const PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"]);

/** Messages (conditions and events) about a pod, newest last. */
function messagesAbout(s: HostSnapshot, pod: PodLike): string[] {
  const out: string[] = [];
  for (const c of pod.status?.conditions ?? []) if (c.status !== "True" && c.message) out.push(`${c.reason ?? c.type}: ${c.message}`);
  for (const e of eventsAbout(s, "Pod", pod.metadata.name)) out.push(`${e.reason}: ${e.message}`);
  return out;
}

/** Which of the four causes keep a pod Pending (several may apply); pure. */
export function pendingCauses(s: HostSnapshot, pod: PodLike): Array<{ cause: PendingCause; detail: string }> {
  const causes = new Map<PendingCause, string>();
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const cs of statuses) {
    const reason = cs.state?.waiting?.reason;
    if (reason && PULL_REASONS.has(reason)) causes.set("image-pull", `container ${cs.name}: ${reason}${cs.state?.waiting?.message ? ` (${cs.state.waiting.message})` : ""}`);
  }
  for (const m of messagesAbout(s, pod)) {
    if (/Insufficient (cpu|memory|ephemeral-storage|pods)|insufficient resources/i.test(m)) causes.set("insufficient-resources", m);
    if (/unbound .*PersistentVolumeClaim|persistentvolumeclaim .* not found|pod has unbound/i.test(m)) causes.set("unbound-volume-claim", m);
    if (/node affinity\/selector|node\(s\) didn't match|untolerated taint|had taint|node selector/i.test(m)) causes.set("node-selector-or-taint", m);
    if (/Failed to pull image|ErrImagePull|ImagePullBackOff|Back-off pulling image/i.test(m) && !causes.has("image-pull")) causes.set("image-pull", m);
  }
  for (const v of pod.spec?.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName;
    if (!claim || causes.has("unbound-volume-claim")) continue;
    const pvc = s.pvcs.find((p) => p.metadata.name === claim);
    const phase = (pvc as { status?: { phase?: string } } | undefined)?.status?.phase;
    if (!pvc) causes.set("unbound-volume-claim", `volume claim ${claim} does not exist`);
    else if (phase !== "Bound") causes.set("unbound-volume-claim", `volume claim ${claim} is ${phase ?? "not bound"}`);
  }
  return [...causes].map(([cause, detail]) => ({ cause, detail }));
}

export const pendingPods: Check = (s) => {
  const out: Finding[] = [];
  for (const o of s.pods) {
    const pod = asPod(o);
    if (pod.status?.phase !== "Pending") continue;
    const causes = pendingCauses(s, pod);
    // A pod whose init container crash-loops is Pending too: the crash check reports that, with its cause.
    const initLooping = (pod.status?.initContainerStatuses ?? []).some((cs) => cs.state?.waiting?.reason === "CrashLoopBackOff");
    if (causes.length === 0 && !initLooping) {
      out.push(finding("pending-unreported", { check: "pod-pending", severity: "warning", object: podRef(pod), message: "Pending, cause not yet visible (no scheduling or pull failure reported)" }));
    }
    for (const c of causes) {
      out.push(finding(ROW[c.cause], { check: "pod-pending", severity: "error", object: podRef(pod), message: `Pending: ${c.cause} (${c.detail})` }));
    }
  }
  return out;
};
