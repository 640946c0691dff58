// Health of the clusters of a desired state on a live host: one cluster at a time, or waited for (vc apply --wait).
import { refObject, type KubeObject, type ObjectRef } from "../kube/object.js";
import { hasHealthRules } from "./object.js";
import { loadDesired } from "../pipeline/load.js";
import type { KubeClient } from "../host/client.js";
import { readClusterHealth } from "./read.js";
import type { ClusterHealth } from "../model/health.js";
import { waitForHealth, type WaitClock, type WaitOptions, type WaitOutcome } from "./wait.js";

/**
 * What reading a cluster's health needs of it: its host namespace and its rendered objects (their references will do).
 */
export interface HealthTarget {
  name: string;
  hostNamespace: string;
  objects: readonly KubeObject[];
}

/** Of a cluster's objects, those with health rules, as references: all reading its health needs of them. */
export function healthRefs(refs: readonly ObjectRef[]): KubeObject[] {
  return refs.filter(hasHealthRules).map(refObject);
}

/**
 * A function that reads one cluster's health from the host, for the clusters given (a desired state's, or their
 * references).
 */
function healthReader(
  client: KubeClient,
  clusters: readonly HealthTarget[],
): (cluster: string) => Promise<ClusterHealth> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  return async (cluster) => {
    const c = byName.get(cluster);
    if (!c) return { status: "Unknown", reason: "not a valid cluster of the repository", objects: [] };
    return readClusterHealth(client, c.hostNamespace, c.objects);
  };
}

/** Waits for the named clusters of `known` to become healthy on the host. */
export function waitForClusters(
  client: KubeClient,
  known: readonly HealthTarget[],
  clusters: readonly string[],
  clock: WaitClock,
  opts: WaitOptions,
): Promise<WaitOutcome> {
  return waitForHealth(clusters, healthReader(client, known), clock, opts);
}

/**
 * One cluster's health, its rendered objects read from the repository at `root` (vc describe): Unknown when the folder
 * is invalid or missing, as vc then does not know what the host should hold.
 */
export async function healthOfRepoCluster(
  client: KubeClient,
  root: string,
  revision: string,
  cluster: string,
): Promise<ClusterHealth> {
  const desired = await loadDesired(root, revision, { clusters: [cluster] });
  const error = desired.errors.find((e) => e.cluster === cluster);
  if (error) return { status: "Unknown", reason: `the folder is invalid: ${error.message}`, objects: [] };
  return healthReader(client, desired.clusters)(cluster);
}
