// Kinds the host must serve before a cluster is applied: one clear error per cluster naming the missing API and its prerequisite.
import { CERT_MANAGER_GROUP, MESH_GROUP } from "../kube/resources.js";
import type { Plan } from "../plan/types.js";
import type { Target } from "./types.js";

interface Kind {
  apiVersion: string;
  kind: string;
}

/**
 * The plan, blocked when it writes kinds the target does not serve (asked of the target's discovery for the kinds
 * of its creates and updates only: a plan with nothing to write costs no request). Nothing of such a cluster is applied.
 */
export async function blockUnservedKinds(target: Target, plan: Plan): Promise<Plan> {
  if (plan.blocked) return plan;
  const seen = new Map<string, Kind>();
  for (const c of plan.changes) if (c.action === "create" || c.action === "update") seen.set(`${c.ref.apiVersion}/${c.ref.kind}`, { apiVersion: c.ref.apiVersion, kind: c.ref.kind });
  if (seen.size === 0) return plan;
  const missing = await target.missingKinds([...seen.values()]);
  if (missing.length === 0) return plan;
  return { ...plan, blocked: unservedMessage(plan.cluster, missing), unserved: missing.map((k) => `${k.apiVersion}/${k.kind}`) };
}

/** One message for all the missing kinds of a cluster, grouped by API group, with what the host needs. */
export function unservedMessage(cluster: string, missing: readonly Kind[]): string {
  const byGroup = new Map<string, Kind[]>();
  for (const k of missing) {
    const g = k.apiVersion.split("/")[0]!;
    byGroup.set(g, [...(byGroup.get(g) ?? []), k]);
  }
  const parts = [...byGroup].sort(([a], [b]) => (a < b ? -1 : 1)).map(([group, kinds]) => {
    const names = `${[...new Set(kinds.map((k) => k.kind))].sort().join(", ")} (${[...new Set(kinds.map((k) => k.apiVersion))].join(", ")})`;
    return `${names}: ${prerequisite(group, cluster)}`;
  });
  return `the host does not serve ${parts.join("; ")}; nothing of cluster ${cluster} is applied until the host serves them`;
}

function prerequisite(group: string, cluster: string): string {
  if (group === MESH_GROUP || group.endsWith(".mesh.io") || group === "mesh.io") {
    return (
      "the mesh's custom resource definitions are missing. The mesh integration needs the mesh installed on the host with its CRDs " +
      `(group suffix mesh.io) present, and the host namespace preferably labelled mesh-injection=enabled; install the mesh, or set integrations.mesh.enabled: false in clusters/${cluster}/values.yaml`
    );
  }
  if (group === CERT_MANAGER_GROUP) {
    return (
      "cert-manager's custom resource definitions are missing. The certificate-manager integration needs cert-manager installed on the host " +
      `with its CRDs (group ${CERT_MANAGER_GROUP}) and a ClusterIssuer; install cert-manager, or set integrations.certManager.enabled: false in clusters/${cluster}/values.yaml and remove clusters/${cluster}/certificates/`
    );
  }
  return `no CRD or API service on the host provides the group ${group}: install what serves it (its CRDs or aggregated API) first`;
}
