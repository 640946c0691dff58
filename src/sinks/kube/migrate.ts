// Moves what vc kept in host namespaces before records (vc-status, vc-history, the inventory labels) into the records
// namespace, once per cluster.
import { objectKey, type KubeObject } from "../../kube/object.js";
import { resourceFor } from "../../kube/resources.js";
import { selectorIn } from "../../kube/selector.js";
import { archiveDepth, DEFAULT_HISTORY_LIMIT, mergeEntries } from "../../records/archive.js";
import { fromData, parseHistory, type ClusterStatus, type Reconciliation } from "../../records/status.js";
import type { KubeClient } from "../../host/client.js";
import type { RecordStore } from "../../records/store.js";
import { mapLimit } from "../../util/pool.js";
import { ANNOTATIONS, FIELD_MANAGER, LABELS } from "../../translate/keys.js";
import { ownedFields } from "../../plan/managed-fields.js";
import type { ClusterRecord } from "../../records/record.js";

/** Names of the ConfigMaps vc kept in each host namespace before records. */
const LEGACY_STATUS = "vc-status";
const LEGACY_HISTORY = "vc-history";

/** What one cluster's migration moved (or, in a dry run, would move). */
export interface Migration {
  cluster: string;
  hostNamespace: string;
  objects: number;
  reconciliations: number;
  suspended: boolean;
}

/** What the migration reads and writes of the host (the kube target). */
export interface LegacyHost {
  readonly client: KubeClient;
  readonly records: RecordStore;
  readonly source?: string;
  readonly pending: Map<string, ClusterRecord>;
  recordsByCluster(only?: readonly string[]): Promise<Map<string, ClusterRecord>>;
  listLegacyInventory(cluster: string, hostNamespace: string): Promise<KubeObject[]>;
}

/**
 * Migrates the clusters that have no record of this source yet but that vc applied before records existed: their
 * Namespace (cluster-scoped: no tenant may label it) carries the cluster's inventory label and no other source's owner
 * label. The record gets the labelled objects in that namespace and cluster-scoped ones, the status, its history and a
 * run-time suspension; then the host's vc-status and vc-history are deleted. A dry run keeps the records in memory
 * (target.pending) so that a plan reads as after the migration. Clusters with a record are left alone: from then on
 * nothing in a host namespace is read as a record.
 */
export async function migrateRecords(
  target: LegacyHost,
  clusters: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
  opts: { dryRun?: boolean; historyLimit?: number } = {},
): Promise<Migration[]> {
  const source = target.source ?? "";
  // One LIST of the records (selecting these clusters, up to 100 of them).
  const records = await target.recordsByCluster(clusters.map((c) => c.cluster));
  const todo = clusters.filter((c) => !records.has(c.cluster));
  if (todo.length === 0) return [];
  // Only a Namespace carrying a cluster's inventory label can hold a legacy record: one LIST of those (selecting
  // these clusters, up to 100 of them), instead of a GET of each cluster's namespace.
  const selector = selectorIn(
    LABELS.inventory,
    todo.map((c) => c.cluster),
  );
  const labelled = new Map(
    (await target.client.list(resourceFor("v1", "Namespace")!, { labelSelector: selector })).map((ns) => [
      ns.metadata.name,
      ns,
    ]),
  );
  const found = await mapLimit(todo, 8, async (c) => {
    const ns = labelled.get(c.hostNamespace);
    return ns ? legacyRecord(target, source, c.cluster, ns) : undefined;
  });
  const out: Migration[] = [];
  for (const m of found) {
    if (!m) continue;
    const { record, archived } = m;
    out.push({
      cluster: record.cluster,
      hostNamespace: record.hostNamespace,
      objects: record.inventory.length,
      reconciliations: mergeEntries(record.status?.history ?? [], archived).length,
      suspended: !!record.suspendedBy,
    });
    if (opts.dryRun) {
      target.pending.set(record.cluster, record);
      continue;
    }
    const store = target.records;
    // History first, then status and inventory, then the suspension: a crash in between leaves the legacy copies, read
    // again next time.
    const depth = archiveDepth(opts.historyLimit ?? DEFAULT_HISTORY_LIMIT);
    if (archived.length > 0 && depth > 0) await store.archive(source, record.cluster, archived, depth);
    if (record.status) await store.writeStatus(source, record.status, depth);
    await store.writeInventory(source, record.cluster, record.hostNamespace, record.inventory);
    if (record.suspendedBy) await store.setSuspension(source, record.cluster, record.hostNamespace, record.suspendedBy);
    for (const name of [LEGACY_STATUS, LEGACY_HISTORY])
      await target.client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: record.hostNamespace, name });
  }
  return out;
}

/** The line a command prints for each migration. */
export function migrationLine(m: Migration, dryRun: boolean): string {
  const what =
    `${m.objects} object(s), ${m.reconciliations} ` +
    `reconciliation(s)${m.suspended ? ", a run-time suspension" : ""}`;
  return (
    `cluster ${m.cluster}: ${dryRun ? "would migrate" : "migrated"} vc's record from host namespace ` +
    `${m.hostNamespace} (vc-status, vc-history, inventory labels: ${what}) to the records namespace`
  );
}

async function legacyRecord(
  target: LegacyHost,
  source: string,
  cluster: string,
  ns: KubeObject,
): Promise<{ record: ClusterRecord; archived: Reconciliation[] } | undefined> {
  if (!ours(ns, cluster, source)) return undefined;
  const hostNamespace = ns.metadata.name;
  const labelled = await target.listLegacyInventory(cluster, hostNamespace);
  const inventory = labelled
    .filter(
      (o) => (o.metadata.namespace === undefined || o.metadata.namespace === hostNamespace) && ours(o, cluster, source),
    )
    .map((o) => objectKey(o));
  const record: ClusterRecord = { source, cluster, hostNamespace, inventory: [...new Set(inventory)].sort() };
  const statusCm = await target.client.get({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: hostNamespace,
    name: LEGACY_STATUS,
  });
  let status: ClusterStatus | undefined;
  if (statusCm && statusCm.metadata.labels?.[LABELS.managedBy] === cluster) {
    status = fromData(statusCm.data as Record<string, string> | undefined, cluster, hostNamespace);
    if (status) {
      status.cluster = cluster;
      status.hostNamespace = hostNamespace;
      if (source) status.owner = source;
      record.status = status;
    }
    const by = statusCm.metadata.annotations?.[ANNOTATIONS.suspendedBy];
    if (by) record.suspendedBy = by;
  }
  const historyCm = await target.client.get({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: hostNamespace,
    name: LEGACY_HISTORY,
  });
  const archived =
    historyCm && historyCm.metadata.labels?.[LABELS.managedBy] === cluster
      ? parseHistory((historyCm.data as Record<string, string> | undefined)?.history).entries
      : [];
  if (record.status && record.suspendedBy) record.status.suspendedBy = record.suspendedBy;
  return { record, archived };
}

/**
 * An object of the cluster's that this source applied: its owner label names this source, or (applied before owners
 * were recorded) it has none and vc's field manager applied it. Another source's objects, and look-alikes someone else
 * labelled, stay out of the record: never updated, never pruned.
 */
function ours(obj: KubeObject, cluster: string, source: string): boolean {
  if (obj.metadata.labels?.[LABELS.inventory] !== cluster) return false;
  const owner = obj.metadata.labels?.[LABELS.owner];
  if (owner !== undefined && owner !== "") return owner === source;
  return obj.kind === "Namespace" || ownedFields(obj, FIELD_MANAGER) !== undefined;
}
