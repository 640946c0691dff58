// A host-side pause of vc's reconciliation of one cluster, for operations (restore) that must not be undone mid-way.
import { PREFIX } from "../translate/keys.js";
import { STATUS_CONFIGMAP } from "../reconciler/status-store.js";
import type { Host } from "./host.js";
import { P } from "./paths.js";
import type { KubeObject } from "../kube/object.js";

/**
 * Annotation on the cluster's status ConfigMap (`vc-status` in its host namespace): while present, the reconciler
 * must not apply that cluster. Its value says who paused it and why. `cluster.yaml`'s `suspend` stays the git-side switch.
 */
export const SUSPEND_ANNOTATION = `${PREFIX}/suspend`;

export function suspendedBy(statusConfigMap: KubeObject | undefined): string | undefined {
  return statusConfigMap?.metadata.annotations?.[SUSPEND_ANNOTATION];
}

/** Sets the annotation; false when the cluster has no status ConfigMap (vc has never reconciled it here). */
export async function suspend(host: Host, namespace: string, reason: string): Promise<boolean> {
  const path = P.configMaps(namespace, STATUS_CONFIGMAP);
  if (!(await host.get(path))) return false;
  await host.mergePatch(path, { metadata: { annotations: { [SUSPEND_ANNOTATION]: reason } } });
  return true;
}

/** Removes the annotation (a no-op when absent). */
export async function resume(host: Host, namespace: string): Promise<void> {
  const path = P.configMaps(namespace, STATUS_CONFIGMAP);
  if (!(await host.get(path))) return;
  await host.mergePatch(path, { metadata: { annotations: { [SUSPEND_ANNOTATION]: null } } });
}
