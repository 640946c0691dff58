// What every command that plans against a live host does first with records: name its source, migrate what host namespaces still hold.
import { defaultHostNamespace } from "../model/cluster.js";
import type { DesiredState } from "./load.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Target } from "../sinks/types.js";
import { migrateRecords, migrationLine } from "../sinks/kube/migrate.js";
import { KubeApiError } from "../host/client.js";
import { type ClusterRecord } from "../records/record.js";
import { RECORDS_NAMESPACE_ENV } from "../translate/keys.js";
import { holdersOf } from "../records/holders.js";

/**
 * Sets the source whose records the run reads (its owner name; "" without one) and migrates the repository's clusters
 * that vc applied before records (sinks/kube/migrate.ts): written unless `dryRun` (then kept in memory for the plan).
 * Returns one line per migrated cluster, for the command to print. A dir: target has no records: nothing happens.
 */
export async function prepareRecords(target: Target, desired: DesiredState, owner: string | undefined, opts: { dryRun?: boolean; historyLimit?: number } = {}): Promise<string[]> {
  if (!(target instanceof KubeTarget)) return [];
  target.source = owner ?? "";
  const clusters = [...desired.known].map(([cluster, hostNamespace]) => ({ cluster, hostNamespace }));
  for (const name of desired.missing) clusters.push({ cluster: name, hostNamespace: defaultHostNamespace(name) });
  try {
    const done = await migrateRecords(target, clusters, opts);
    // The contested clusters' records, when there are any (no LIST of every record for nothing).
    if (desired.contested?.length) admitHolders(desired, await target.recordsByCluster(desired.contested.map((c) => c.name)));
    return done.map((m) => migrationLine(m, !!opts.dryRun));
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 403)) throw err;
    throw new Error(recordsForbidden(target.records.namespace, err));
  }
}

/** Admits the contested clusters whose record holds their namespace on the host: valid again, out of the errors. */
function admitHolders(desired: DesiredState, records: Map<string, ClusterRecord>): void {
  if (!desired.contested?.length) return;
  const admitted = holdersOf(desired.contested, records);
  if (admitted.length === 0) return;
  const names = new Set(admitted.map((c) => c.name));
  desired.clusters.push(...admitted);
  desired.clusters.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  desired.errors = desired.errors.filter((e) => !names.has(e.cluster));
  desired.contested = desired.contested.filter((c) => !names.has(c.name));
}

/** What to grant when the records may not be read or written. */
export function recordsForbidden(namespace: string, err: Error): string {
  return (
    `cannot read vc's records (ConfigMaps in namespace ${namespace}): ${err.message} ` +
    `(vc needs get, list, create and patch on ConfigMaps in the records namespace; set ${RECORDS_NAMESPACE_ENV} if the reconciler keeps them elsewhere)`
  );
}
