// Doctor check of API discovery: the mesh CRDs and the metrics API group the cluster's integrations need on the host.
import { MESH_API_VERSION, MESH_GROUP, METRICS_GROUP, METRICS_VERSION, RESOURCES, apiVersionOf } from "../../kube/resources.js";
import { meshEnabled } from "./mesh.js";
import { metricsIntegrationEnabled } from "./metrics.js";
import type { Check, Finding } from "./types.js";

/** The kinds whose presence the check asks discovery about (gather.ts reads them into `missingKinds`). */
export const DISCOVERED_KINDS: ReadonlyArray<{ apiVersion: string; kind: string }> = RESOURCES.filter((r) => r.group === MESH_GROUP || r.group === METRICS_GROUP).map((r) => ({ apiVersion: apiVersionOf(r), kind: r.kind }));

export const servedKinds: Check = (s) => {
  if (!s.missingKinds || s.unreadable?.discovery) return [];
  const missing = (apiVersion: string) => s.missingKinds!.filter((k) => k.startsWith(`${apiVersion}/`)).map((k) => k.slice(apiVersion.length + 1));
  const out: Finding[] = [];
  const mesh = missing(MESH_API_VERSION);
  if (mesh.length > 0 && meshEnabled(s)) {
    out.push({
      check: "mesh-crds",
      severity: "error",
      object: `APIGroup ${MESH_API_VERSION}`,
      message: `the host does not serve ${mesh.sort().join(", ")}: the mesh's custom resource definitions are missing, so vc cannot apply the cluster's mesh objects (and applies nothing of the cluster)`,
      resolution: `install the mesh on the host with its CRDs (group suffix mesh.io), as the mesh integration requires; or set integrations.mesh.enabled: false in clusters/${s.cluster}/values.yaml`,
    });
  }
  // An absent or unavailable APIService is the metrics-api check's finding; this one catches a group the service registers but does not serve.
  const available = (s.metricsApiService as { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined)?.status?.conditions?.some((c) => c.type === "Available" && c.status === "True");
  const metrics = missing(`${METRICS_GROUP}/${METRICS_VERSION}`);
  if (metrics.length > 0 && metricsIntegrationEnabled(s) && available) {
    out.push({
      check: "metrics-api-group",
      severity: "error",
      object: `APIGroup ${METRICS_GROUP}/${METRICS_VERSION}`,
      message: `the APIService is Available but discovery does not list ${metrics.sort().join(", ")} in ${METRICS_GROUP}/${METRICS_VERSION}`,
      resolution: "check the metrics proxy's discovery answer (GET /apis/metrics.orch.io/v1beta1) and its logs; restart the metrics proxy",
    });
  }
  return out;
};
