// The public host claims of the clusters of one reconcile pass, read from their specs before any write (host-claims.ts decides them).
import { folderClaims } from "../validate/host-claims.js";
import type { LoadedCluster } from "./engine.js";
import type { ClusterStatus } from "./status.js";

/**
 * Each cluster of the pass that will be synced (valid, not suspended in cluster.yaml nor at run time) with the public
 * hosts its mesh manifests claim (validate/host-claims.ts folderClaims: only the parts that claim are rendered).
 */
export function passClaims(loaded: readonly LoadedCluster[], statuses: ReadonlyMap<string, ClusterStatus>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of loaded) {
    const spec = c.spec;
    if (!spec || spec.mesh.length === 0 || spec.settings.suspend || statuses.get(c.name)?.suspendedBy) continue;
    const hosts = [...new Set(folderClaims(spec).map((c) => c.host))].sort();
    if (hosts.length > 0) out.set(c.name, hosts);
  }
  return out;
}
