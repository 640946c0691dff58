// vc's records as a test reads them off the in-memory server: the record ConfigMap (and its history) of a cluster, whichever source holds it.
import type { KubeObject } from "../../src/kube/object.js";
import { DEFAULT_RECORDS_NAMESPACE, RECORD_LABEL } from "../../src/records/record.js";
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
