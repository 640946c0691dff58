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
 * How vc reads a host named in a mesh resource of virtual namespace `virtualNamespace`:
 * - `service`: a service of the virtual cluster, translated to its host FQDN: `svc`, `svc.ns.svc`,
 *   `svc.ns.svc.cluster.local` (a trailing dot, the FQDN form, is the same name), and `svc.ns` when `ns` is one of the
 *   cluster's namespaces (`namespaces`: those its mesh manifests live in; without the set every `svc.ns` is a service);
 * - `external`: a host outside the cluster, kept as written (bounded by the fleet policy's hosts.virtualServices):
 *   domains (`example.com` too when `com` is not one of the cluster's namespaces), `*`, wildcards over domains, IPs;
 * - `refused`: a cluster-local name vc cannot translate, which would otherwise reach past the tenant: a wildcard over
 *   services (`*.team-x.svc.cluster.local`, `*.svc.cluster.local`, `*.team-x`), `svc.ns.svc.<other domain>` (also the
 *   four-label `svc.ns.svc.cluster`), any other name under `cluster.local`, an empty or malformed name.
 */
export type HostForm =
  | { form: "service"; service: string; namespace: string }
  | { form: "external"; host: string }
  | { form: "refused"; reason: string };

const CLUSTER_LOCAL = ["svc", ...CLUSTER_DOMAIN.split(".")];

/**
 * Whether `labels` (a DNS name's labels) end a cluster-local name: `…svc.cluster.local`, `…cluster.local`, `…local`,
 * `svc`.
 */
function clusterLocalSuffix(labels: readonly string[]): boolean {
  const n = labels.length;
  for (let k = 1; k <= CLUSTER_LOCAL.length; k++) {
    if (n >= k && labels.slice(n - k).join(".") === CLUSTER_LOCAL.slice(CLUSTER_LOCAL.length - k).join("."))
      return true;
  }
  return labels[n - 1] === "svc";
}

export function classifyHost(host: string, virtualNamespace: string, namespaces?: ReadonlySet<string>): HostForm {
  if (host === "") return { form: "refused", reason: "an empty host" };
  const name = (host.endsWith(".") ? host.slice(0, -1) : host).toLowerCase();
  if (name.includes(":") || name.includes("/")) return { form: "external", host }; // an IPv6 address (or not a name at all)
  const labels = name.split(".");
  if (labels.some((l) => l === "")) return { form: "refused", reason: `"${host}" has an empty label` };
  if (name === "*") return { form: "external", host };
  if (labels[0] === "*") {
    const rest = labels.slice(1);
    if (clusterLocalSuffix(rest) || (rest.length === 1 && (namespaces === undefined || namespaces.has(rest[0]!)))) {
      return {
        form: "refused",
        reason:
          `the wildcard "${host}" spans cluster services, which cannot be translated to this cluster's host ` +
          `names: name each service`,
      };
    }
    if (labels.slice(1).some((l) => l.includes("*")))
      return { form: "refused", reason: `"${host}" has a wildcard inside it` };
    return { form: "external", host };
  }
  if (name.includes("*")) return { form: "refused", reason: `"${host}" has a wildcard that is not its first label` };
  if (/^\d+$/.test(labels[labels.length - 1]!)) return { form: "external", host }; // an IPv4 address
  if (labels.length === 1) return { form: "service", service: labels[0]!, namespace: virtualNamespace };
  if (labels.length === 2) {
    if (namespaces === undefined || namespaces.has(labels[1]!))
      return { form: "service", service: labels[0]!, namespace: labels[1]! };
    return labels[1] === "svc" || labels[1] === "local"
      ? {
          form: "refused",
          reason: `"${host}" is a cluster-local name vc cannot translate: write svc.ns.svc.${CLUSTER_DOMAIN}`,
        }
      : { form: "external", host };
  }
  if (labels[2] === "svc") {
    const domain = labels.slice(3).join(".");
    if (domain === "" || domain === CLUSTER_DOMAIN)
      return { form: "service", service: labels[0]!, namespace: labels[1]! };
    return {
      form: "refused",
      reason:
        `"${host}" names service ${labels[0]} in namespace ${labels[1]} under the domain "${domain}", which ` +
        `vc does not translate: write ${labels[0]}.${labels[1]}.svc.${CLUSTER_DOMAIN}`,
    };
  }
  if (clusterLocalSuffix(labels))
    return {
      form: "refused",
      reason: `"${host}" is a cluster-local name vc cannot translate: write svc.ns.svc.${CLUSTER_DOMAIN}`,
    };
  return { form: "external", host };
}

/**
 * Translates a service host named in a mesh resource of virtual namespace `virtualNamespace` (see classifyHost): a
 * service becomes `<host name of svc in ns>.<hostNamespace>.svc.cluster.local`; an external host stays as written;
 * a refused form (validation reports it, so a valid cluster has none) stays as written too.
 */
export function translateServiceHost(
  host: string,
  virtualNamespace: string,
  cluster: string,
  hostNamespace: string,
  namespaces?: ReadonlySet<string>,
): string {
  const ref = classifyHost(host, virtualNamespace, namespaces);
  if (ref.form !== "service") return host;
  return `${hostName(ref.service, ref.namespace, cluster)}.${hostNamespace}.svc.${CLUSTER_DOMAIN}`;
}

/** The virtual service a host refers to, or undefined when it is not a virtual cluster-local service. */
export function parseServiceHost(
  host: string,
  virtualNamespace: string,
  namespaces?: ReadonlySet<string>,
): { service: string; namespace: string } | undefined {
  const ref = classifyHost(host, virtualNamespace, namespaces);
  return ref.form === "service" ? { service: ref.service, namespace: ref.namespace } : undefined;
}

/** A cluster's namespaces as mesh hosts read them: those its mesh manifests live in (`default` when unset). */
export function meshNamespaces(objects: ReadonlyArray<{ metadata?: { namespace?: string } }>): Set<string> {
  return new Set(
    objects.map((o) =>
      typeof o.metadata?.namespace === "string" && o.metadata.namespace !== "" ? o.metadata.namespace : "default",
    ),
  );
}
