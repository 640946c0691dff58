// The public host claims of the clusters of one reconcile pass, read from their specs before any write (host-claims.ts decides them).
import { renderMesh } from "../render/mesh/index.js";
import { publicHosts } from "../target/host-claims.js";
import type { LoadedCluster } from "./engine.js";
import type { ClusterStatus } from "./status.js";

/**
 * Each cluster of the pass that will be synced (valid, not suspended in cluster.yaml nor at run time) with the public
 * hosts its mesh manifests claim; only the mesh manifests are rendered, so this costs little beside the pass itself.
 */
export function passClaims(loaded: readonly LoadedCluster[], statuses: ReadonlyMap<string, ClusterStatus>, revision: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of loaded) {
    const spec = c.spec;
    if (!spec || spec.mesh.length === 0 || spec.settings.suspend || statuses.get(c.name)?.suspendedBy) continue;
    const objects = renderMesh(spec.mesh, spec.values, { cluster: spec.name, hostNamespace: spec.settings.namespace, revision });
    const hosts = [...new Set(objects.flatMap(publicHosts))].sort();
    if (hosts.length > 0) out.set(c.name, hosts);
  }
  return out;
}
