// Doctor checks of pods: Pending and its four causes, CrashLoopBackOff with restarts, OOMKilled last states.
import { asPod, podRef, type Check, type Finding, type HostSnapshot, type PodLike } from "./types.js";

export type PendingCause = "insufficient-resources" | "unbound-volume-claim" | "image-pull" | "node-selector-or-taint";

const RESOLUTION: Record<PendingCause, string> = {
  "insufficient-resources": "the nodes lack the requested CPU or memory: lower the pod's resource requests, free capacity or add nodes",
  "unbound-volume-claim": "a volume claim is not bound: check the volume claims and their storage class (kubectl get pvc), and that the class can provision",
  "image-pull": "the image cannot be pulled: check the image name and tag, the registry's reachability and the image pull secret",
  "node-selector-or-taint": "no node matches the pod's node selector or affinity, or the nodes carry taints the pod does not tolerate: fix the selector or add tolerations",
};

const PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"]);

/** Messages (conditions and events) about a pod, newest last. */
function messagesAbout(s: HostSnapshot, pod: PodLike): string[] {
  const out: string[] = [];
  for (const c of pod.status?.conditions ?? []) if (c.status !== "True" && c.message) out.push(`${c.reason ?? c.type}: ${c.message}`);
  for (const e of s.events) {
    const inv = (e as { involvedObject?: { kind?: string; name?: string } }).involvedObject;
    const ev = e as { reason?: string; message?: string };
    if (inv?.kind === "Pod" && inv.name === pod.metadata.name && ev.message) out.push(`${ev.reason ?? ""}: ${ev.message}`);
  }
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
    if (causes.length === 0) {
      out.push({ check: "pod-pending", severity: "warning", object: podRef(pod), message: "Pending, cause not yet visible (no scheduling or pull failure reported)", resolution: "wait a moment and run vc doctor again; read the namespace events (vc debug collect)" });
    }
    for (const c of causes) {
      out.push({ check: "pod-pending", severity: "error", object: podRef(pod), message: `Pending: ${c.cause} (${c.detail})`, resolution: RESOLUTION[c.cause] });
    }
  }
  return out;
};

const RESOURCES_HINT =
  "raise the memory limit (suggested control-plane resources: requests cpu 200m / memory 512Mi, limits cpu 1000m / memory 2Gi; larger profile requests 500m / 1Gi, limits 2000m / 4Gi)";

export const crashingPods: Check = (s) => {
  const out: Finding[] = [];
  for (const o of s.pods) {
    const pod = asPod(o);
    for (const cs of pod.status?.containerStatuses ?? []) {
      const oom = cs.lastState?.terminated?.reason === "OOMKilled" || cs.state?.terminated?.reason === "OOMKilled";
      const limit = pod.spec?.containers?.find((c) => c.name === cs.name)?.resources?.limits?.memory;
      if (cs.state?.waiting?.reason === "CrashLoopBackOff") {
        out.push({
          check: "crash-loop",
          severity: "error",
          object: podRef(pod),
          message: `container ${cs.name} in CrashLoopBackOff after ${cs.restartCount ?? 0} restarts${oom ? ", last terminated OOMKilled" : ""}`,
          resolution: oom
            ? `memory exhaustion: ${RESOURCES_HINT}${limit ? ` (limit now ${limit})` : ""}`
            : "read the previous logs (vc debug collect); causes are memory exhaustion, a liveness probe that is too aggressive, application errors or node pressure",
        });
      } else if (oom) {
        out.push({
          check: "oom-killed",
          severity: "warning",
          object: podRef(pod),
          message: `container ${cs.name} was OOMKilled (${cs.restartCount ?? 0} restarts)`,
          resolution: `${RESOURCES_HINT}${limit ? ` (limit now ${limit})` : ""}`,
        });
      }
    }
  }
  return out;
};
