// vc's records as a test reads them off the in-memory server: the record ConfigMap (and its history) of a cluster,
// whichever source holds it.
import type { KubeObject } from "../../src/kube/object.js";
import { RECORD_LABEL, recordBase } from "../../src/records/record.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { LABELS } from "../../src/translate/keys.js";

interface Lists {
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
}

/** The record ConfigMaps of a cluster (every source's), in the records namespace. */
export function recordConfigMaps(server: Lists, cluster: string, kind: "record" | "history" = "record"): KubeObject[] {
  return server
    .list("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE)
    .filter((c) => c.metadata.labels?.[RECORD_LABEL] === kind && c.metadata.labels?.[LABELS.managedBy] === cluster);
}

/** The one record ConfigMap of a cluster (undefined when none; throws when several sources hold one). */
export function recordConfigMap(server: Lists, cluster: string): KubeObject | undefined {
  const found = recordConfigMaps(server, cluster);
  if (found.length > 1) throw new Error(`${found.length} records of cluster ${cluster}`);
  return found[0];
}

/** The status data of a cluster's record. */
export function recordData(server: Lists, cluster: string): Record<string, string> | undefined {
  return recordConfigMap(server, cluster)?.data as Record<string, string> | undefined;
}

/** Path pattern of a record's requests (PATCH /api/v1/namespaces/vc-system/configmaps/vc-record-<cluster>-<hash>). */
export const RECORD_PATH = /\/namespaces\/vc-system\/configmaps\/vc-record-[a-z0-9-]+-[0-9a-f]{12}$/;
/**
 * Path of the records namespace's ConfigMaps: a record's first write is a POST there (its later ones, PATCH
 * RECORD_PATH).
 */
export const RECORDS_COLLECTION = "/api/v1/namespaces/vc-system/configmaps";

interface Puts extends Lists {
  put(obj: KubeObject): unknown;
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
}

/** Puts a record of (source, cluster) on the server as vc writes it (the records namespace created when missing). */
export function putRecord(
  server: Puts,
  o: {
    cluster: string;
    hostNamespace: string;
    source?: string;
    data?: Record<string, string>;
    annotations?: Record<string, string>;
  },
): KubeObject {
  if (!server.get("v1", "Namespace", undefined, DEFAULT_RECORDS_NAMESPACE))
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: DEFAULT_RECORDS_NAMESPACE, labels: { "vc.orch.io/platform-namespace": "true" } },
    });
  const base = recordBase(DEFAULT_RECORDS_NAMESPACE, o.source ?? "", o.cluster, o.hostNamespace);
  const cm: KubeObject = {
    ...base,
    metadata: { ...base.metadata, ...(o.annotations ? { annotations: o.annotations } : {}) },
    data: { ...(base.data as Record<string, string>), ...o.data },
  };
  server.put(cm);
  return cm;
}

/**
 * Changes the data (a key given undefined is removed) and annotations of a cluster's one record as vc would write them.
 */
export function editRecord(
  server: Puts,
  cluster: string,
  data: Record<string, string | undefined>,
  annotations?: Record<string, string>,
): KubeObject {
  const cm = recordConfigMap(server, cluster);
  if (!cm) throw new Error(`no record of cluster ${cluster}`);
  const merged: Record<string, string | undefined> = { ...(cm.data as Record<string, string>), ...data };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  const next: KubeObject = {
    ...cm,
    metadata: {
      ...cm.metadata,
      ...(annotations ? { annotations: { ...cm.metadata.annotations, ...annotations } } : {}),
    },
    data: merged,
  };
  server.put(next);
  return next;
}
