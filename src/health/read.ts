// Reads what a cluster's health needs from a live host (the I/O edge): its health-bearing objects, their pods and
// claims.
import type { KubeObject } from "../kube/object.js";
import { refOf } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { mapLimit } from "../util/pool.js";
import { clusterHealth, type LiveOf } from "./cluster.js";
import { hasHealthRules } from "./object.js";
import { readControlledPods } from "./owned-pods.js";
import type { ClusterHealth } from "../model/health.js";

/** Reads at once per cluster. */
const READS = 4;
/** Events read about one Pending pod (for its causes): one page. */
const MAX_EVENTS = 100;

/** Why a read failed, as a health reason says it. */
export function why(err: unknown): string {
  if (err instanceof KubeApiError)
    return err.status === 403 ? "not visible to you (forbidden)" : `read failed (${err.status})`;
  return `read failed: ${(err as Error).message}`;
}

/** Names of a StatefulSet's claims: `<template>-<set>-<ordinal>` for each replica. */
export function claimNames(o: KubeObject): Set<string> {
  const spec = (o.spec ?? {}) as { replicas?: number; volumeClaimTemplates?: Array<{ metadata?: { name?: string } }> };
  const out = new Set<string>();
  for (const t of spec.volumeClaimTemplates ?? []) {
    for (let i = 0; i < (spec.replicas ?? 1); i++) out.add(`${t.metadata?.name ?? ""}-${o.metadata.name}-${i}`);
  }
  return out;
}

/**
 * The health of one cluster: one GET per rendered object with health rules (StatefulSet, Deployment, APIService,
 * Certificate, Namespace), one LIST of pods per workload selector, one LIST of claims, and events only when a pod is
 * Pending.
 */
export async function readClusterHealth(
  client: KubeClient,
  hostNamespace: string,
  desired: readonly KubeObject[],
): Promise<ClusterHealth> {
  const wanted = desired.filter(hasHealthRules);
  const objects: LiveOf[] = await mapLimit(wanted, READS, async (d): Promise<LiveOf> => {
    const ref = refOf(d);
    try {
      const live = await client.get(ref);
      return live ? { ref, live } : { ref };
    } catch (err) {
      return { ref, unreadable: why(err) };
    }
  });
  try {
    return clusterHealth({ objects, ...(await readPodsAndClaims(client, hostNamespace, objects)) });
  } catch (err) {
    // Pods or claims that cannot be read leave the cluster's health Unknown, with why.
    return clusterHealth({
      objects: [
        ...objects,
        { ref: { apiVersion: "v1", kind: "Pod", namespace: hostNamespace, name: "*" }, unreadable: why(err) },
      ],
      pods: [],
      claims: [],
    });
  }
}

async function readPodsAndClaims(
  client: KubeClient,
  hostNamespace: string,
  objects: LiveOf[],
): Promise<{ pods: KubeObject[]; claims: KubeObject[]; events: KubeObject[] }> {
  const workloads = objects
    .map((o) => o.live)
    .filter((o): o is KubeObject => !!o && (o.kind === "StatefulSet" || o.kind === "Deployment"));
  const pods = await readControlledPods(client, hostNamespace, workloads);
  // The claims by name (a StatefulSet names them), never a LIST of what the tenant's syncer may also create.
  const wanted = [...new Set(workloads.filter((w) => w.kind === "StatefulSet").flatMap((w) => [...claimNames(w)]))];
  const claims = (
    await mapLimit(wanted, READS, (name) =>
      client.get({ apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: hostNamespace, name }),
    )
  ).filter((c): c is KubeObject => c !== undefined);
  const pending = pods.filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Pending");
  const events = (await mapLimit(pending, READS, (p) => podEvents(client, hostNamespace, p.metadata.name))).flat();
  return { pods, claims, events };
}

/** The events about one pod: one page of at most MAX_EVENTS (the tenant's syncer may create events too). */
function podEvents(client: KubeClient, namespace: string, pod: string): Promise<KubeObject[]> {
  return client
    .listPage(resourceFor("v1", "Event")!, {
      namespace,
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${pod}`,
      limit: MAX_EVENTS,
    })
    .then(
      (page) => page.items,
      () => [],
    );
}
