// A cluster's health from its live objects and pods (pure): the worst object wins, with the first reason of that
// health.
import { objectName, worse, type ClusterHealth, type HealthStatus, type ObjectHealth } from "../model/health.js";
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { objectHealth } from "./object.js";
import { podHealth } from "./pod.js";

/** What the host holds of one of the cluster's rendered objects. */
export interface LiveOf {
  ref: ObjectRef;
  /** The live object; undefined when it does not exist. */
  live?: KubeObject;
  /** Why it could not be read (forbidden, a failed request): its health is Unknown. */
  unreadable?: string;
}

export interface ClusterLive {
  /** The cluster's rendered objects that have health rules, in apply order. */
  objects: LiveOf[];
  /** The pods of its workloads (control plane, metrics proxy). */
  pods: KubeObject[];
  /** The volume claims of its StatefulSet. */
  claims: KubeObject[];
  /** Events of the host namespace (for a pod's pending cause). */
  events?: KubeObject[];
}

const refName = (r: ObjectRef) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;

/**
 * Healthy when every object and pod is; Degraded when one is (a stuck pod, a failed rollout, a certificate refused);
 * Unknown when one could not be read or nothing of the cluster exists; else Progressing. The reason is the first of the
 * winning health: objects in apply order, then claims, then pods by name.
 */
export function clusterHealth(live: ClusterLive): ClusterHealth {
  const objects: ObjectHealth[] = [];
  for (const o of live.objects) {
    const object = refName(o.ref);
    if (o.unreadable) objects.push({ object, status: "Unknown", reason: `${object}: ${o.unreadable}` });
    else if (!o.live) objects.push({ object, status: "Progressing", reason: `${object} not found` });
    else {
      const h = objectHealth(o.live);
      objects.push({ object, ...h, ...(h.reason ? { reason: `${object}: ${h.reason}` } : {}) });
    }
  }
  for (const c of [...live.claims].sort(byName)) {
    const h = objectHealth(c);
    objects.push({ object: objectName(c), ...h, ...(h.reason ? { reason: `${objectName(c)}: ${h.reason}` } : {}) });
  }
  const updateRevisions = new Set(
    live.objects
      .map((o) =>
        o.live?.kind === "StatefulSet"
          ? (o.live.status as { updateRevision?: string } | undefined)?.updateRevision
          : undefined,
      )
      .filter((r): r is string => !!r),
  );
  for (const p of [...live.pods].sort(byName)) {
    const h = podHealth(p, live.events ?? [], live.claims);
    // A stuck pod of the revision being replaced is what a rollout fixes: Progressing, not Degraded.
    const revision = p.metadata.labels?.["controller-revision-hash"];
    const replaced =
      h.status === "Degraded" && revision !== undefined && updateRevisions.size > 0 && !updateRevisions.has(revision);
    objects.push({
      object: objectName(p),
      ...(replaced ? { status: "Progressing", reason: `${h.reason} (revision ${revision}, being replaced)` } : h),
    });
  }

  if (live.objects.length > 0 && live.objects.every((o) => !o.live && !o.unreadable)) {
    return { status: "Unknown", reason: "not on the host: nothing of the cluster is applied", objects };
  }
  let status: HealthStatus = "Healthy";
  for (const o of objects) if (worse(o.status, status)) status = o.status;
  const first = objects.find((o) => o.status === status);
  return { status, ...(status !== "Healthy" && first?.reason ? { reason: first.reason } : {}), objects };
}

function byName(a: KubeObject, b: KubeObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}
