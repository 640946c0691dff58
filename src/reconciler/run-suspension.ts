// What `vc apply`, `vc adopt` and `vc diff` learn from a live host before they plan: the clusters an operation (`vc restore`) suspended at run time.
import type { DesiredState } from "../target/desired.js";
import { KubeApiError } from "../target/kube/client.js";
import { KubeTarget } from "../target/kube/target.js";
import type { Target } from "../target/types.js";
import type { ClusterStatus } from "./status.js";
import { KubeStatusStore, readStatuses } from "./status-store.js";

export interface RunTimeSuspension {
  /** The status of each of the repository's clusters (undefined: it has none), for the record step to reuse. */
  statuses: Map<string, ClusterStatus | undefined>;
  /** The clusters suspended at run time: cluster -> who and why (the `vc.orch.io/suspended-by` annotation). */
  suspended: Map<string, string>;
}

/**
 * Reads the statuses of the repository's clusters (one LIST, or one read per cluster named with --cluster) and which
 * of them are suspended at run time. Only a live host has run-time suspension (an annotation on the `vc-status`
 * ConfigMap): for a dir: target it is undefined, and nothing is read.
 */
export async function readRunTimeSuspension(target: Target, desired: DesiredState, selected: readonly string[]): Promise<RunTimeSuspension | undefined> {
  if (!(target instanceof KubeTarget)) return undefined;
  const clusters = [...desired.known].map(([cluster, hostNamespace]) => ({ cluster, hostNamespace }));
  let statuses: Map<string, ClusterStatus | undefined>;
  try {
    // The store statusStoreFor (service.ts) gives a live host, without loading the reconciler's service.
    statuses = await readStatuses(new KubeStatusStore(target.client), clusters, { oneByOne: selected.length > 0 });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 403)) throw err;
    throw new Error(
      `cannot read the clusters' status ConfigMaps (vc-status) to see whether one is suspended: ${(err as Error).message} ` +
        "(vc needs get on ConfigMaps in each cluster's host namespace)",
    );
  }
  const suspended = new Map<string, string>();
  for (const [cluster, s] of statuses) if (s?.suspendedBy) suspended.set(cluster, s.suspendedBy);
  return { statuses, suspended };
}
