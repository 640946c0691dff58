// The pods a workload vc applied controls, read by ownership (controller UIDs), never by labels a tenant may copy, and
// within a bound: the syncer may create pods in its namespace carrying any labels, with any status and any size.
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { formatMatchLabels } from "../kube/selector.js";
import type { KubeClient } from "../host/client.js";
import { mapLimit } from "../util/pool.js";

/** Pods a page of a selected LIST holds: a page is parsed whole, so this bounds what one tenant's pods cost at once. */
export const POD_PAGE = 50;
/**
 * Pods of a namespace read for a workload's selector before the read stops: a Deployment has a few, and pods past this
 * that its ReplicaSets do not control are someone else's (the syncer's own, or planted to look like the control plane).
 */
const MAX_PODS_SCANNED = 500;

/** A read of tenant-writable objects stopped at its bound: the cluster's health is Unknown, saying why. */
export class ReadBoundExceeded extends Error {}

interface OwnerReference {
  uid?: string;
  controller?: boolean;
  kind?: string;
  name?: string;
}

/** The object's controller (its ownerReference with `controller: true`), or undefined. */
function controllerOf(o: KubeObject): OwnerReference | undefined {
  const refs = (o.metadata as { ownerReferences?: OwnerReference[] }).ownerReferences;
  return Array.isArray(refs) ? refs.find((r) => r?.controller === true) : undefined;
}

/** The UID of the object's controller, or undefined. */
function controllerUid(o: KubeObject): string | undefined {
  return controllerOf(o)?.uid;
}

/** Whether `o` is controlled by the object with this UID (an object without a UID controls nothing). */
export function isControlledBy(o: KubeObject, uid: string | undefined): boolean {
  return uid !== undefined && uid !== "" && controllerUid(o) === uid;
}

/**
 * The pod selector's labels of a workload (matchLabels only; vc renders no expressions); undefined when it has none.
 */
export function selectorLabels(o: KubeObject): Record<string, string> | undefined {
  const labels = (o.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
  return labels && Object.keys(labels).length > 0 ? labels : undefined;
}

/** The names of a StatefulSet's pods: `<set>-<ordinal>` for each replica (a StatefulSet names its pods so). */
function statefulSetPodNames(o: KubeObject): string[] {
  const replicas = (o.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  return Array.from({ length: Math.max(0, Math.min(replicas, 1000)) }, (_, i) => `${o.metadata.name}-${i}`);
}

/**
 * The pods the live workloads control, in the workloads' namespace: a StatefulSet's by name (one GET per replica, kept
 * when the StatefulSet's UID controls them), a Deployment's through its ReplicaSets (pods of its selector read a page
 * of POD_PAGE at a time, kept when the ReplicaSet controlling them, read once each, is controlled by the Deployment).
 * Throws ReadBoundExceeded when more than MAX_PODS_SCANNED pods carry a Deployment's selector.
 */
export async function readControlledPods(
  client: KubeClient,
  namespace: string,
  workloads: readonly KubeObject[],
): Promise<KubeObject[]> {
  const pods: KubeObject[] = [];
  const seen = new Set<string>();
  const keep = (p: KubeObject) => {
    if (!seen.has(p.metadata.name)) pods.push(p), seen.add(p.metadata.name);
  };
  const podType = resourceFor("v1", "Pod")!;
  for (const w of workloads) {
    const ns = w.metadata.namespace ?? namespace;
    const uid = w.metadata.uid;
    if (w.kind === "StatefulSet") {
      const found = await mapLimit(statefulSetPodNames(w), 4, (name) =>
        client.get({ apiVersion: "v1", kind: "Pod", namespace: ns, name }),
      );
      for (const p of found) if (p && isControlledBy(p, uid)) keep({ ...p, apiVersion: "v1", kind: "Pod" });
      continue;
    }
    const labels = selectorLabels(w);
    if (!labels) continue;
    let scanned = 0;
    const candidates = await client.listMapped(
      podType,
      { namespace: ns, labelSelector: formatMatchLabels(labels), limit: POD_PAGE },
      (p) => {
        if (++scanned > MAX_PODS_SCANNED) throw new ReadBoundExceeded(tooMany(ns, w));
        return controllerOf(p)?.kind === "ReplicaSet" ? p : undefined;
      },
    );
    // The ReplicaSets the pods name: each read once, a pod kept when the Deployment controls its ReplicaSet.
    const sets = new Map<string, Promise<boolean>>();
    const ownedBy = (name: string): Promise<boolean> => {
      let owned = sets.get(name);
      if (!owned) {
        const path = `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/replicasets/${encodeURIComponent(name)}`;
        owned = client.request<KubeObject>("GET", path).then(
          (rs) => isControlledBy(rs, uid),
          () => false,
        );
        sets.set(name, owned);
      }
      return owned;
    };
    const mine: KubeObject[] = [];
    for (const p of candidates) {
      const rs = controllerOf(p)!;
      if (rs.name && (await ownedBy(rs.name)) && isControlledBy(p, rs.uid)) mine.push(p);
    }
    for (const p of mine) keep(p);
  }
  return pods;
}

/** Why a read of a workload's pods stopped. */
function tooMany(namespace: string, w: KubeObject): string {
  return (
    `more than ${MAX_PODS_SCANNED} pods in ${namespace} carry the selector of ${w.kind} ${w.metadata.name}: ` +
    `the read stopped there (pods its ReplicaSets do not control are not its own)`
  );
}
