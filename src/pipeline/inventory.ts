// Reads the live inventory of a full pass chunk by chunk: per kind, one LIST selecting a chunk of clusters
// (`vc.orch.io/inventory in (a,b,...)`), so a resync of 1,000 clusters never holds the whole fleet's objects.
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { DirTarget } from "../sinks/dir.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Target } from "../sinks/types.js";
import { LABELS } from "../translate/keys.js";

/** Clusters per chunk: 100 keeps a LIST's selector near 2 KB and a chunk's objects to a few thousand. */
export const INVENTORY_CHUNK = 100;

/** The live inventory of each named cluster (an empty list for a cluster with nothing on the target). */
export async function listChunkInventory(target: Target, clusters: readonly string[]): Promise<Map<string, KubeObject[]>> {
  const out = new Map<string, KubeObject[]>(clusters.map((c) => [c, []]));
  if (clusters.length === 0) return out;
  // A kind the host does not serve (mesh CRDs not installed: 404) holds nothing; the plan then says what is missing.
  if (target instanceof KubeTarget) return target.listRecordedInventory(clusters);
  for (const c of clusters) out.set(c, await target.listInventory(c));
  return out;
}

/**
 * Names of the clusters that have objects on the target, to find clusters whose folder is gone: on a live host the
 * clusters this source has records of (one LIST of the records namespace), on a dir: target the folder listing (no
 * manifest read), elsewhere the fleet inventory.
 */
export async function clustersOnTarget(target: Target): Promise<string[]> {
  if (target instanceof KubeTarget) return [...(await target.recordsByCluster()).keys()].sort();
  if (target instanceof DirTarget) return target.listClusterNames();
  return [...(await target.listFleetInventory()).keys()].sort();
}

/**
 * The clusters vc applied before records (an inventory-labelled Namespace: cluster-scoped, no tenant may label one),
 * with their host namespace: what a pass migrates (sinks/kube/migrate.ts) before it reads records. One small LIST.
 */
export async function legacyClusters(target: Target): Promise<Array<{ cluster: string; hostNamespace: string }>> {
  if (!(target instanceof KubeTarget)) return [];
  const namespaces = await target.client.list(resourceFor("v1", "Namespace")!, { labelSelector: LABELS.inventory });
  return namespaces.map((n) => ({ cluster: n.metadata.labels![LABELS.inventory]!, hostNamespace: n.metadata.name })).sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
}
