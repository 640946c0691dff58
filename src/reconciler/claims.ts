// The public host claims of the clusters of one reconcile pass, read from their specs before any write (host-claims.ts
// decides them).
import { folderClaims } from "../validate/host-claims.js";
import type { LoadedCluster } from "../pipeline/engine.js";
import type { ClusterStatus } from "../records/status.js";

/**
 * Each cluster of the pass that will be synced (valid, not suspended in cluster.yaml nor at run time) with the public
 * hosts its mesh manifests claim (validate/host-claims.ts folderClaims: only the parts that claim are rendered).
 */
export function passClaims(
  loaded: readonly LoadedCluster[],
  statuses: ReadonlyMap<string, ClusterStatus>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of loaded) {
    const spec = c.spec;
    // A summary load (a streamed full pass's index) has no spec: a valid folder carries its claims and settings.
    const valid = spec !== undefined || (c.valid === true && !c.diagnostics.some((d) => d.severity === "error"));
    const suspended = spec ? spec.settings.suspend : c.settings?.suspend;
    if (!valid || suspended || statuses.get(c.name)?.suspendedBy) continue;
    const claimed = spec ? (spec.mesh.length === 0 ? [] : folderClaims(spec)) : (c.claims ?? []);
    const hosts = [...new Set(claimed.map((c) => c.host))].sort();
    if (hosts.length > 0) out.set(c.name, hosts);
  }
  return out;
}
