// What `vc apply`, `vc adopt` and `vc diff` learn from a live host before they plan: the clusters an operation (`vc
// restore`) suspended at run time.
import type { DesiredState } from "./load.js";
import type { ClusterRecord } from "../records/record.js";
import type { Target } from "../sinks/types.js";
import type { ClusterStatus } from "../records/status.js";
import { forbidden } from "./prepare.js";

export interface RunTimeSuspension {
  /** The status of each of the repository's clusters (undefined: it has none), for the record step to reuse. */
  statuses: Map<string, ClusterStatus | undefined>;
  /** The clusters suspended at run time: cluster -> who and why (the `vc.orch.io/suspended-by` annotation). */
  suspended: Map<string, string>;
}

/**
 * Reads the statuses of the repository's clusters from this source's records (one LIST of the records namespace) and
 * which of them are suspended at run time. Only a live host has run-time suspension (an annotation on the cluster's
 * record in the records namespace): for a dir: target it is undefined, and nothing is read.
 */
export async function readRunTimeSuspension(
  target: Target,
  desired: DesiredState,
  _selected: readonly string[],
): Promise<RunTimeSuspension | undefined> {
  if (!target.recordsByCluster) return undefined;
  let records: Map<string, ClusterRecord>;
  try {
    // This source's records (one LIST of the records namespace), with the migrations a dry run keeps in memory.
    records = await target.recordsByCluster();
  } catch (err) {
    throw forbidden(target, err);
  }
  const statuses = new Map<string, ClusterStatus | undefined>();
  for (const [cluster, hostNamespace] of desired.known) {
    const r = records.get(cluster);
    statuses.set(cluster, r?.status && r.status.hostNamespace === hostNamespace ? r.status : undefined);
  }
  const suspended = new Map<string, string>();
  for (const cluster of desired.known.keys()) {
    const by = records.get(cluster)?.suspendedBy;
    if (by) suspended.set(cluster, by);
  }
  return { statuses, suspended };
}
