// Reads what a cluster's health needs from a live host (the I/O edge): its health-bearing objects, their pods and claims.
import type { KubeObject } from "../kube/object.js";
import { refOf } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { formatMatchLabels } from "../kube/selector.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { mapLimit } from "../util/pool.js";
import { clusterHealth, type LiveOf } from "./cluster.js";
import { hasHealthRules } from "./object.js";
import type { ClusterHealth } from "../model/health.js";

/** Reads at once per cluster. */
const READS = 4;

/** Why a read failed, as a health reason says it. */
export function why(err: unknown): string {
  if (err instanceof KubeApiError)
    return err.status === 403 ? "not visible to you (forbidden)" : `read failed (${err.status})`;
  return `read failed: ${(err as Error).message}`;
}

/** The pod selector's labels of a workload (matchLabels only; vc renders no expressions); undefined when it has none. */
export function selectorLabels(o: KubeObject): Record<string, string> | undefined {
  const labels = (o.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
  return labels && Object.keys(labels).length > 0 ? labels : undefined;
}

/** The pod selector of a workload, as a LIST takes it. */
function selectorOf(o: KubeObject): string | undefined {
  const labels = selectorLabels(o);
  return labels ? formatMatchLabels(labels) : undefined;
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
 * Certificate, Namespace), one LIST of pods per workload selector, one LIST of claims, and events only when a pod is Pending.
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
  const pods: KubeObject[] = [];
  const seen = new Set<string>();
  const podType = resourceFor("v1", "Pod")!;
  for (const w of workloads) {
    const selector = selectorOf(w);
    if (!selector) continue;
    for (const p of await client.list(podType, {
      namespace: w.metadata.namespace ?? hostNamespace,
      labelSelector: selector,
    })) {
      if (!seen.has(p.metadata.name)) pods.push(p), seen.add(p.metadata.name);
    }
  }
  const wantedClaims = new Set(workloads.filter((w) => w.kind === "StatefulSet").flatMap((w) => [...claimNames(w)]));
  const claims =
    wantedClaims.size === 0
      ? []
      : (await client.list(resourceFor("v1", "PersistentVolumeClaim")!, { namespace: hostNamespace })).filter((c) =>
          wantedClaims.has(c.metadata.name),
        );
  const pending = pods.some((p) => (p.status as { phase?: string } | undefined)?.phase === "Pending");
  const events = pending
    ? await client.list(resourceFor("v1", "Event")!, { namespace: hostNamespace }).catch(() => [])
    : [];
  return { pods, claims, events };
}
