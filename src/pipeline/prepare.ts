// What every command that plans against a target that keeps records does first: name its source, migrate what host
// namespaces still hold, and say what to grant when the records may not be read.
import { defaultHostNamespace } from "../model/cluster.js";
import { KubeApiError } from "../host/client.js";
import type { Target } from "../sinks/types.js";
import { RECORDS_NAMESPACE_ENV } from "../translate/keys.js";
import type { DesiredState } from "./load.js";

/**
 * Sets the source whose records the run reads (its owner name; "" without one) and migrates the repository's clusters
 * that vc applied before records (Target.migrateRecords): written unless `dryRun` (then kept in memory for the plan).
 * Returns one line per migrated cluster, for the command to print. A dir: target has no records: nothing happens.
 */
export async function prepareRecords(
  target: Target,
  desired: DesiredState,
  owner: string | undefined,
  opts: { dryRun?: boolean; historyLimit?: number } = {},
): Promise<string[]> {
  if (!target.migrateRecords) return [];
  target.source = owner ?? "";
  const clusters = [...desired.known].map(([cluster, hostNamespace]) => ({ cluster, hostNamespace }));
  for (const name of desired.missing) clusters.push({ cluster: name, hostNamespace: defaultHostNamespace(name) });
  try {
    return (await target.migrateRecords(clusters, opts)).map((m) => m.message);
  } catch (err) {
    throw forbidden(target, err);
  }
}

/** A 403 reading the records as the error that says what to grant; any other error as it is. */
export function forbidden(target: Target, err: unknown): unknown {
  if (!(err instanceof KubeApiError && err.status === 403)) return err;
  return new Error(recordsForbidden(target.recordsNamespace ?? "", err));
}

/** What to grant when the records may not be read or written. */
function recordsForbidden(namespace: string, err: Error): string {
  return (
    `cannot read vc's records (ConfigMaps in namespace ${namespace}): ${err.message} ` +
    `(vc needs get, list, create and patch on ConfigMaps in the records namespace; set ${RECORDS_NAMESPACE_ENV} if ` +
    `the reconciler keeps them elsewhere)`
  );
}
