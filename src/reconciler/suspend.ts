// Suspending a cluster's reconciliation at run time (e.g. during `vc restore`) without a commit: an annotation on its status ConfigMap.
import { KubeApiError, type KubeClient } from "../target/kube/client.js";
import { LABELS } from "../translate/keys.js";
import { STATUS_CONFIGMAP, STATUS_LABEL, SUSPENDED_BY_ANNOTATION } from "./status-store.js";

export { SUSPENDED_BY_ANNOTATION };
/** Field manager of run-time suspension, separate from the reconciler's so that its status writes never remove it. */
export const SUSPEND_FIELD_MANAGER = "vc-suspend";

/** Suspends reconciliation of a cluster until resume(); `reason` such as "vc restore oci://...". */
export async function suspendCluster(client: KubeClient, cluster: string, hostNamespace: string, reason: string): Promise<void> {
  await client.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: STATUS_CONFIGMAP,
        namespace: hostNamespace,
        labels: { [LABELS.managedBy]: cluster, [STATUS_LABEL]: "true" },
        annotations: { [SUSPENDED_BY_ANNOTATION]: reason },
      },
    },
    { fieldManager: SUSPEND_FIELD_MANAGER },
  );
}

/** Resumes reconciliation: the suspend manager gives up the annotation (applying an object without it). */
export async function resumeCluster(client: KubeClient, cluster: string, hostNamespace: string): Promise<void> {
  try {
    await client.apply(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: STATUS_CONFIGMAP, namespace: hostNamespace, labels: { [LABELS.managedBy]: cluster, [STATUS_LABEL]: "true" } },
      },
      { fieldManager: SUSPEND_FIELD_MANAGER },
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return; // namespace gone: nothing suspended
    throw err;
  }
}
