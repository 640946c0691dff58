// The compact index a fleet streamed chunk by chunk keeps for its cross-cluster rules: host namespace -> the clusters
// claiming it.
import type { Diagnostic } from "../model/diagnostic.js";

/** The code of the cross-cluster rule's finding (validate/index.ts). */
export const NAMESPACE_CONFLICT = "namespace-conflict";

/** What the index needs of a validated cluster (a summary-detail result is enough; no spec). */
export interface NamespaceClaimant {
  name: string;
  valid?: boolean;
  settings?: { namespace: string };
  spec?: { settings: { namespace: string } };
  diagnostics?: readonly Diagnostic[];
}

/**
 * Host namespace -> names of the clusters that claim it: each valid cluster, and each that the namespace rule alone
 * made invalid (its claim is what conflicts), with cluster.yaml's namespace or the default.
 */
export function namespaceClaims(clusters: Iterable<NamespaceClaimant>): Map<string, string[]> {
  const claims = new Map<string, string[]>();
  for (const c of clusters) {
    const errors = (c.diagnostics ?? []).filter((d) => d.severity === "error");
    const claiming =
      c.spec !== undefined ||
      c.valid === true ||
      (errors.length > 0 && errors.every((d) => d.code === NAMESPACE_CONFLICT));
    const ns = c.spec?.settings.namespace ?? c.settings?.namespace;
    if (!claiming || ns === undefined) continue;
    const names = claims.get(ns);
    if (names) names.push(c.name);
    else claims.set(ns, [c.name]);
  }
  return claims;
}
