// The naming contract: host names of virtual objects and translation of mesh service hosts.
import { createHash } from "node:crypto";

/** Longest name of a host object (DNS-1123 label). */
export const MAX_NAME_LENGTH = 63;

/**
 * Joins parts with "-"; a result over 63 characters becomes its first 52 characters, "-", and the first
 * 10 hex characters of the SHA-256 of the full join, with any ".-" left by the cut made "-" (the rule the
 * existing syncers use, so names match theirs).
 */
export function safeConcatName(...parts: string[]): string {
  const full = parts.join("-");
  if (full.length <= MAX_NAME_LENGTH) return full;
  const digest = createHash("sha256").update(full).digest("hex").slice(0, 10);
  return `${full.slice(0, 52)}-${digest}`.replaceAll(".-", "-");
}

/** Host name of a namespaced virtual object: `<name>-x-<virtual_namespace>-x-<cluster>`, hashed past 63 characters. */
export function hostName(name: string, virtualNamespace: string, cluster: string): string {
  return safeConcatName(name, "x", virtualNamespace, "x", cluster);
}

/**
 * Host name of a Secret a synced object names in virtual namespace `virtualNamespace`: a Gateway's
 * `tls.credentialName`, a Certificate's `spec.secretName`. One rule for both, so that the Secret cert-manager
 * issues for a Certificate is the one the Gateway in the same virtual namespace reads.
 */
export function hostSecretName(name: string, virtualNamespace: string, cluster: string): string {
  return hostName(name, virtualNamespace, cluster);
}

/** Host name of a virtual namespace-less object scoped to a cluster: `<name>-x-<cluster>`. */
export function hostClusterScopedName(name: string, cluster: string): string {
  return safeConcatName(name, "x", cluster);
}

export const CLUSTER_DOMAIN = "cluster.local";

/**
 * Translates a service host named in a mesh resource of virtual namespace `virtualNamespace`.
 * `svc`, `svc.ns`, `svc.ns.svc` and `svc.ns.svc.cluster.local` name a service of the virtual cluster and
 * become `<host name of svc in ns>.<hostNamespace>.svc.cluster.local`. Everything else (external domains
 * with three or more labels that do not end in `.svc` / `.svc.cluster.local`, wildcards, IPs) stays as it
 * is. A two-label host is always read as `svc.ns`: write external two-label domains with a wildcard or
 * use a ServiceEntry on the host.
 */
export function translateServiceHost(
  host: string,
  virtualNamespace: string,
  cluster: string,
  hostNamespace: string,
): string {
  const ref = parseServiceHost(host, virtualNamespace);
  if (!ref) return host;
  return `${hostName(ref.service, ref.namespace, cluster)}.${hostNamespace}.svc.${CLUSTER_DOMAIN}`;
}

/** The virtual service a host refers to, or undefined when it is not a virtual cluster-local service. */
export function parseServiceHost(
  host: string,
  virtualNamespace: string,
): { service: string; namespace: string } | undefined {
  if (host.includes("*") || host.includes(":") || host.includes("/")) return undefined;
  const labels = host.split(".");
  if (labels.some((l) => l === "")) return undefined;
  if (/^\d+$/.test(labels[labels.length - 1]!)) return undefined; // an IP address
  switch (labels.length) {
    case 1:
      return { service: labels[0]!, namespace: virtualNamespace };
    case 2:
      return { service: labels[0]!, namespace: labels[1]! };
    case 3:
      return labels[2] === "svc" ? { service: labels[0]!, namespace: labels[1]! } : undefined;
    case 5:
      return labels[2] === "svc" && `${labels[3]}.${labels[4]}` === CLUSTER_DOMAIN
        ? { service: labels[0]!, namespace: labels[1]! }
        : undefined;
    default:
      return undefined;
  }
}
