// Doctor check of API discovery: the mesh CRDs and the metrics API group the cluster's integrations need on the host.
import {
  MESH_API_VERSION,
  MESH_GROUP,
  METRICS_GROUP,
  METRICS_VERSION,
  RESOURCES,
  apiVersionOf,
} from "../../kube/resources.js";
import { finding } from "./coverage.js";
import { hostApiGroupOf, meshEnabled, metricsIntegrationEnabled } from "./facts.js";
import { apiServiceAvailable } from "./metrics.js";
import type { Check, Finding } from "./types.js";

/**
 * The kinds whose presence the check asks discovery about: the mesh kinds, and pod and node metrics in the host's
 * group.
 */
export function discoveredKinds(hostApiGroup: string): Array<{ apiVersion: string; kind: string }> {
  return RESOURCES.filter((r) => r.group === MESH_GROUP || r.group === METRICS_GROUP).map((r) => ({
    apiVersion: r.group === METRICS_GROUP ? `${hostApiGroup}/${METRICS_VERSION}` : apiVersionOf(r),
    kind: r.kind,
  }));
}

export const servedKinds: Check = (s) => {
  if (!s.missingKinds || s.unreadable?.discovery) return [];
  const missing = (apiVersion: string) =>
    s.missingKinds!.filter((k) => k.startsWith(`${apiVersion}/`)).map((k) => k.slice(apiVersion.length + 1));
  const out: Finding[] = [];
  const mesh = missing(MESH_API_VERSION);
  if (mesh.length > 0 && meshEnabled(s)) {
    const message =
      `the host does not serve ${mesh.sort().join(", ")}: the mesh's custom resource definitions are ` +
      `missing, so vc cannot apply the cluster's mesh objects (and applies nothing of the cluster)`;
    const how =
      `install the mesh on the host with its CRDs (group suffix mesh.io), as the mesh integration ` +
      `requires; or set integrations.mesh.enabled: false in clusters/${s.cluster}/values.yaml`;
    out.push(
      finding(
        "mesh-not-effective",
        { check: "mesh-crds", severity: "error", object: `APIGroup ${MESH_API_VERSION}`, message },
        how,
      ),
    );
  }
  // An absent or unavailable APIService is the metrics-host-api check's finding; this one catches a group the service
  // registers but does not serve.
  const group = `${hostApiGroupOf(s)}/${METRICS_VERSION}`;
  const metrics = missing(group);
  if (metrics.length > 0 && metricsIntegrationEnabled(s) && apiServiceAvailable(s.metricsApiService)) {
    const message = `the APIService is Available but discovery does not list ${metrics.sort().join(", ")} in ${group}`;
    out.push(
      finding(
        "metrics-not-available",
        { check: "metrics-api-group", severity: "error", object: `APIGroup ${group}`, message },
        `check the host metrics server's discovery answer (GET /apis/${group}) and its logs`,
      ),
    );
  }
  return out;
};
