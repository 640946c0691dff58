// Which virtual cluster a request is answered for: its name, its host namespace, and which nodes it sees.

/** One virtual cluster as the proxy answers for it. */
export interface ClusterScope {
  /** The virtual cluster's name: the value of the `vc.orch.io/managed-by` label its synced pods carry. */
  name: string;
  /** The host namespace its pods are synced to; only pods there count as its own. */
  hostNamespace: string;
  /** Node metrics of the nodes its pods run on (`synced`), or of every host node (`all`). */
  nodes: "synced" | "all";
}

/** A cluster's key in the proxy's maps and in its status: `<host namespace>/<name>`. */
export function scopeKey(scope: Pick<ClusterScope, "name" | "hostNamespace">): string {
  return `${scope.hostNamespace}/${scope.name}`;
}
