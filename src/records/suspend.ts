// Suspending a cluster's reconciliation at run time (e.g. during `vc restore`) without a commit: an annotation on its
// record in the records namespace.
import type { KubeClient } from "../host/client.js";
import { RecordStore } from "./store.js";
import { SUSPENDED_BY_ANNOTATION } from "./status-store.js";

export { SUSPENDED_BY_ANNOTATION };

/** The source whose record holds the cluster (the oldest claim), "" when none does yet. */
async function holderOf(records: RecordStore, cluster: string): Promise<string> {
  return (await records.list()).find((r) => r.cluster === cluster)?.source ?? "";
}

/** Suspends reconciliation of a cluster until resume(); `reason` such as "vc restore oci://...". */
export async function suspendCluster(
  client: KubeClient,
  cluster: string,
  hostNamespace: string,
  reason: string,
  records = new RecordStore(client),
): Promise<void> {
  await records.setSuspension(await holderOf(records, cluster), cluster, hostNamespace, reason);
}

/** Resumes reconciliation: the suspend manager gives up the annotation (applying the record without it). */
export async function resumeCluster(
  client: KubeClient,
  cluster: string,
  hostNamespace: string,
  records = new RecordStore(client),
): Promise<void> {
  await records.setSuspension(await holderOf(records, cluster), cluster, hostNamespace, undefined);
}
