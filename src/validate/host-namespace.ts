// Which host namespaces a cluster may live in: never the host's, the platform's (reconciler, mesh, cert-manager) or
// `default`; within the fleet policy's pattern when it sets one.
import { defaultHostNamespace } from "../model/cluster.js";
import { recordsNamespace } from "../translate/keys.js";
import { namespaceDiagnostic, type ClusterResult } from "./result.js";

/** Namespaces of the platform's integrations on the host: the mesh's control plane and cert-manager. */
const INTEGRATION_NAMESPACES: readonly string[] = ["istio-system", "cert-manager"];

/**
 * Why `ns` can never be a virtual cluster's host namespace, or undefined. The syncer is granted Secrets, ConfigMaps and
 * Leases there: in the reconciler's namespace it would read the reconciler's credentials and take its leader Lease.
 */
export function reservedNamespaceProblem(ns: string, reconcilerNamespace = recordsNamespace()): string | undefined {
  if (ns.startsWith("kube-"))
    return (
      `host namespace "${ns}" belongs to the host cluster itself (kube-*): choose a namespace of the virtual ` +
      `cluster's own`
    );
  if (ns === "default")
    return 'host namespace "default" is shared with everything else on the host: give the cluster a namespace of its own (the default vc-<name>)';
  if (ns === reconcilerNamespace || ns === "vc-system")
    return (
      `host namespace "${ns}" is the reconciler's own namespace (its credentials, its leader Lease, vc's ` +
      `records): choose a namespace of the virtual cluster's own`
    );
  if (INTEGRATION_NAMESPACES.includes(ns))
    return (
      `host namespace "${ns}" belongs to a platform integration (the mesh or cert-manager): choose a ` +
      `namespace of the virtual cluster's own`
    );
  return undefined;
}

/** `vc-*`-style glob (only `*` is special, matching any characters) against a namespace. */
function namespaceMatches(ns: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\-]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(ns);
}

/**
 * Refuses clusters whose host namespace is reserved, or outside the fleet policy's `hostNamespaces.pattern`: a located
 * error on cluster.yaml's `namespace` (or on the folder, for the default vc-<name>); the cluster is invalid, the others
 * go on.
 */
export function hostNamespaceRules(realRoot: string, clusters: ClusterResult[], pattern: string | undefined): void {
  for (const c of clusters) {
    if (!c.valid) continue;
    const ns = c.settings?.namespace ?? defaultHostNamespace(c.name);
    const reserved = reservedNamespaceProblem(ns);
    const outside =
      !reserved && pattern !== undefined && !namespaceMatches(ns, pattern)
        ? `host namespace "${ns}" is outside the fleet policy's hostNamespaces.pattern "${pattern}" (policy.yaml)`
        : undefined;
    const message = reserved ?? outside;
    if (!message) continue;
    c.diagnostics.push(
      namespaceDiagnostic(realRoot, c, reserved ? "reserved-namespace" : "policy-host-namespace", message),
    );
    delete c.spec;
    c.valid = false;
  }
}
