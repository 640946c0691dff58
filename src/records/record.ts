// The record vc keeps of one cluster of one source (inventory, status, suspension) and its ConfigMap form in the
// records namespace (pure).
import { createHash } from "node:crypto";
import type { KubeObject } from "../kube/object.js";
import { ANNOTATIONS, LABELS, PREFIX } from "../translate/keys.js";
import { APPLYING_ANNOTATION, parseLease, type ApplyLease } from "./lease.js";
import { fromData, toData, type ClusterStatus } from "./status.js";

/** Label on every record ConfigMap: "record" (the record itself) or "history" (its older reconciliations). */
export const RECORD_LABEL = `${PREFIX}/record`;
/**
 * Label of a record ConfigMap naming the cluster's host namespace, so that the claims on one namespace are one LIST.
 */
export const HOST_NAMESPACE_LABEL = `${PREFIX}/host-namespace`;

/** One cluster's record: what vc applied for it, where, its status; the authority for every decision about it. */
export interface ClusterRecord {
  /** The owner name of the source (model/owner.ts); "" for a run without one. */
  source: string;
  cluster: string;
  hostNamespace: string;
  /** When the record was first written (the server's creationTimestamp): the older of two claims wins. */
  since?: string;
  /** Keys (kube/object.ts objectKey) of the host objects vc applied for this cluster and may update or prune. */
  inventory: string[];
  /** The reconcile status (status.ts); absent until a run recorded one. */
  status?: ClusterStatus;
  /** Who suspended the cluster at run time and why (`vc restore`); absent: not suspended. */
  suspendedBy?: string;
  /** The run writing the cluster's objects now, or the last one that never finished (lease.ts); absent: none. */
  applying?: ApplyLease;
  /** The record ConfigMap's resourceVersion as read: every write of the record compares and swaps on it. */
  resourceVersion?: string;
}

/**
 * Name of the record ConfigMap of (source, cluster): the cluster's name for people, and a hash of both, because owner
 * names may hold characters a name may not.
 */
export function recordName(source: string, cluster: string): string {
  return `vc-record-${cluster}-${createHash("sha256").update(`${source}\n${cluster}`).digest("hex").slice(0, 12)}`;
}

/** Name of the ConfigMap beside a record holding its older reconciliations. */
export function historyName(source: string, cluster: string): string {
  return `${recordName(source, cluster)}-history`;
}

/** Data keys of the record ConfigMap besides the status's own (status.ts toData). */
export const INVENTORY_KEY = "inventory";
const SOURCE_KEY = "source";

/** The labels of a record's ConfigMaps (for LISTs and for people; the data is the authority). */
export function recordLabels(source: string, cluster: string, kind: "record" | "history"): Record<string, string> {
  return { [RECORD_LABEL]: kind, [LABELS.managedBy]: cluster, ...(source ? { [LABELS.owner]: source } : {}) };
}

/** The identity part every writer of the record ConfigMap sets (same values from each field manager). */
export function recordBase(namespace: string, source: string, cluster: string, hostNamespace: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: recordName(source, cluster),
      namespace,
      labels: {
        ...recordLabels(source, cluster, "record"),
        ...(hostNamespace ? { [HOST_NAMESPACE_LABEL]: hostNamespace } : {}),
      },
    },
    data: { [SOURCE_KEY]: source, cluster, hostNamespace },
  };
}

/** The record of a ConfigMap of the records namespace, or undefined when it is not one. */
export function fromRecordConfigMap(cm: KubeObject): ClusterRecord | undefined {
  const data = (cm.data as Record<string, string> | undefined) ?? {};
  if (cm.metadata.labels?.[RECORD_LABEL] !== "record" || data.cluster === undefined || data[SOURCE_KEY] === undefined)
    return undefined;
  const source = data[SOURCE_KEY];
  const cluster = data.cluster;
  if (cm.metadata.name !== recordName(source, cluster)) return undefined;
  const rec: ClusterRecord = {
    source,
    cluster,
    hostNamespace: data.hostNamespace ?? "",
    inventory: parseInventory(data[INVENTORY_KEY]),
  };
  const created = cm.metadata.creationTimestamp as unknown;
  if (created) rec.since = created instanceof Date ? created.toISOString() : String(created);
  if (data.result !== undefined || data.lastAttemptedRevision !== undefined || data.lastAppliedRevision !== undefined) {
    const status = fromData(data, cluster, rec.hostNamespace)!;
    status.cluster = cluster;
    status.hostNamespace = rec.hostNamespace;
    if (source) status.owner = source;
    else delete status.owner;
    rec.status = status;
  }
  const by = cm.metadata.annotations?.[ANNOTATIONS.suspendedBy];
  if (by) {
    rec.suspendedBy = by;
    if (rec.status) rec.status.suspendedBy = by;
  }
  const applying = parseLease(cm.metadata.annotations?.[APPLYING_ANNOTATION]);
  if (applying) {
    rec.applying = applying;
    if (rec.status) rec.status.applying = applying;
  }
  if (cm.metadata.resourceVersion) rec.resourceVersion = cm.metadata.resourceVersion;
  return rec;
}

/** The status data a record ConfigMap holds for a status (without run-time suspension or spilled entries). */
export function statusData(status: ClusterStatus): Record<string, string> {
  const { suspendedBy: _s, spilled: _p, applying: _a, ...rest } = status;
  const data = toData(rest);
  delete data.owner;
  return data;
}

function parseInventory(text: string | undefined): string[] {
  try {
    const parsed = JSON.parse(text ?? "[]") as unknown;
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === "string") : [];
  } catch {
    return [];
  }
}

/** The inventory as stored: sorted, without duplicates. */
export function inventoryText(keys: Iterable<string>): string {
  return JSON.stringify([...new Set(keys)].sort());
}

/** Sorts records by cluster, then by claim age (older first), then source. */
export function byClusterThenAge(a: ClusterRecord, b: ClusterRecord): number {
  return cmp(a.cluster, b.cluster) || olderFirst(a, b) || cmp(a.source, b.source);
}

/** The older claim first; a record without `since` (not yet written) is the newest. */
export function olderFirst(a: ClusterRecord, b: ClusterRecord): number {
  if (a.since === b.since) return 0;
  if (a.since === undefined) return 1;
  if (b.since === undefined) return -1;
  return a.since < b.since ? -1 : 1;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
