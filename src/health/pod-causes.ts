// What a pod's state says (pure): its shape as the checks read it, and the causes that keep it Pending (spec section
// 3).
import type { KubeObject } from "../kube/object.js";

/** What the causes of a pod's state are read from: the events and volume claims of its namespace. */
export interface PodFacts {
  events: KubeObject[];
  pvcs: KubeObject[];
}

export interface PodLike {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    containers?: Array<{
      name: string;
      resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
    }>;
    initContainers?: Array<{
      name: string;
      resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
    }>;
    volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>;
    nodeSelector?: Record<string, string>;
  };
  status?: {
    phase?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

export interface ContainerStatus {
  name: string;
  restartCount?: number;
  state?: {
    waiting?: { reason?: string; message?: string };
    running?: unknown;
    terminated?: { reason?: string; exitCode?: number };
  };
  lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
  ready?: boolean;
}

export function asPod(o: KubeObject): PodLike {
  return o as unknown as PodLike;
}

export type PendingCause = "insufficient-resources" | "unbound-volume-claim" | "image-pull" | "node-selector-or-taint";

const PULL_REASONS = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "RegistryUnavailable",
]);

/** Messages (conditions and events) about a pod, newest last. */
function messagesAbout(s: PodFacts, pod: PodLike): string[] {
  const out: string[] = [];
  for (const c of pod.status?.conditions ?? [])
    if (c.status !== "True" && c.message) out.push(`${c.reason ?? c.type}: ${c.message}`);
  for (const e of eventsAbout(s, "Pod", pod.metadata.name)) out.push(`${e.reason}: ${e.message}`);
  return out;
}

/** Which of the four causes keep a pod Pending (several may apply); pure. */
export function pendingCauses(s: PodFacts, pod: PodLike): Array<{ cause: PendingCause; detail: string }> {
  const causes = new Map<PendingCause, string>();
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const cs of statuses) {
    const reason = cs.state?.waiting?.reason;
    if (reason && PULL_REASONS.has(reason))
      causes.set(
        "image-pull",
        `container ${cs.name}: ${reason}${cs.state?.waiting?.message ? ` (${cs.state.waiting.message})` : ""}`,
      );
  }
  for (const m of messagesAbout(s, pod)) {
    if (/Insufficient (cpu|memory|ephemeral-storage|pods)|insufficient resources/i.test(m))
      causes.set("insufficient-resources", m);
    if (/unbound .*PersistentVolumeClaim|persistentvolumeclaim .* not found|pod has unbound/i.test(m))
      causes.set("unbound-volume-claim", m);
    if (/node affinity\/selector|node\(s\) didn't match|untolerated taint|had taint|node selector/i.test(m))
      causes.set("node-selector-or-taint", m);
    if (
      /Failed to pull image|ErrImagePull|ImagePullBackOff|Back-off pulling image/i.test(m) &&
      !causes.has("image-pull")
    )
      causes.set("image-pull", m);
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

/** Events about one object (kind and name), oldest first by `.lastTimestamp`. */
export function eventsAbout(
  s: Pick<PodFacts, "events">,
  kind: string,
  name: string,
): Array<{ reason: string; message: string }> {
  type Ev = {
    involvedObject?: { kind?: string; name?: string };
    reason?: string;
    message?: string;
    lastTimestamp?: string;
  };
  return (s.events as unknown as Ev[])
    .filter((e) => e.involvedObject?.kind === kind && e.involvedObject.name === name && e.message)
    .sort((a, b) => String(a.lastTimestamp ?? "").localeCompare(String(b.lastTimestamp ?? "")))
    .map((e) => ({ reason: e.reason ?? "", message: e.message! }));
}
