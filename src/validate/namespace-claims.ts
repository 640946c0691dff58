// The compact index a fleet streamed chunk by chunk keeps for its cross-cluster rules: host namespace -> the valid clusters claiming it.

/** What the index needs of a validated cluster (a summary-detail result is enough; no spec). */
export interface NamespaceClaimant {
  name: string;
  valid?: boolean;
  settings?: { namespace: string };
  spec?: { settings: { namespace: string } };
}

/** Host namespace -> names of the valid clusters that claim it (cluster.yaml's namespace, else the default). */
export function namespaceClaims(clusters: Iterable<NamespaceClaimant>): Map<string, string[]> {
  const claims = new Map<string, string[]>();
  for (const c of clusters) {
    const ns = c.spec?.settings.namespace ?? (c.valid ? c.settings?.namespace : undefined);
    if (ns === undefined) continue;
    const names = claims.get(ns);
    if (names) names.push(c.name);
    else claims.set(ns, [c.name]);
  }
  return claims;
}
