// Reads the host snapshot `vc doctor` checks: one LIST per kind, secret existence by name only (values dropped).
import type { KubeObject } from "../../kube/object.js";
import { formatMatchLabels } from "../../kube/selector.js";
import type { Values } from "../../model/values.js";
import type { Host } from "../host.js";
import { METRICS_API_SERVICE, P } from "../paths.js";
import { credentialLookups } from "./mesh.js";
import { DISCOVERED_KINDS } from "./kinds.js";
import { Discovery } from "../../target/kube/discovery.js";
import { HostError } from "../host.js";
import { isForbidden, NOT_VISIBLE, visibleOrThrow } from "../visible.js";
import type { HostSnapshot, Readable } from "./types.js";

export async function gatherSnapshot(host: Host, cluster: string, namespace: string, values?: Values): Promise<HostSnapshot> {
  const unreadable: Partial<Record<Readable, string>> = {};
  /** Reads what only some checks need; a failure (often 403 for a namespace-scoped user) skips those checks. */
  const optional = async <T>(part: Readable, fallback: T, read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      unreadable[part] ??= isForbidden(err) ? NOT_VISIBLE : err instanceof HostError ? err.message : (err as Error).message;
      return fallback;
    }
  };
  const [namespaceObject, statefulSet, pods, events, pvcs, deployments] = await Promise.all([
    optional("namespace", undefined, () => host.get(P.namespace(namespace))),
    visibleOrThrow(namespace, "statefulsets", host.get(P.statefulSets(namespace, cluster))),
    visibleOrThrow(namespace, "pods", host.list(P.pods(namespace))),
    visibleOrThrow(namespace, "events", host.list(P.events(namespace))),
    visibleOrThrow(namespace, "persistentvolumeclaims", host.list(P.pvcs(namespace))),
    visibleOrThrow(namespace, "deployments", host.list(P.deployments(namespace))),
  ]);
  const none: KubeObject[] = [];
  const [metricsApiService, roles, roleBindings, clusterRoles, clusterRoleBindings, gateways] = await Promise.all([
    optional("apiService", undefined, () => host.get(P.apiService(METRICS_API_SERVICE))),
    optional("rbac", none, () => host.list(P.roles(namespace))),
    optional("rbac", none, () => host.list(P.roleBindings(namespace))),
    optional("rbac", none, () => host.list(P.clusterRoles())),
    optional("rbac", none, () => host.list(P.clusterRoleBindings())),
    optional("gateways", none, () => host.list(P.mesh("Gateway", namespace))),
  ]);
  // Certificates matter only for Gateways that name a TLS Secret, while the cluster's values (when known) have the
  // certificate-manager integration on; a host without cert-manager answers 404: none.
  const namesSecret = gateways.some((gw) => ((gw.spec as { servers?: Array<{ tls?: { credentialName?: string } }> } | undefined)?.servers ?? []).some((sv) => sv.tls?.credentialName));
  const certManager = values?.integrations.certManager.enabled ?? true;
  const certificates = namesSecret && certManager ? await optional("certificates", undefined, () => host.list(P.certificates(namespace))) : undefined;
  const missing = await optional("discovery", undefined, () => new Discovery(host.client).missing(DISCOVERED_KINDS));
  const ingressPods: KubeObject[] = [];
  const seen = new Set<string>();
  for (const gw of gateways) {
    const selector = (gw as { spec?: { selector?: Record<string, string> } }).spec?.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    for (const p of await optional("ingressPods", none, () => host.list(P.allPods(), { labelSelector: formatMatchLabels(selector) }))) {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      if (!seen.has(key)) ingressPods.push(p), seen.add(key);
    }
  }
  const existingSecrets: string[] = [];
  for (const ref of credentialLookups({ namespace, gateways, ingressPods })) {
    const [ns, name] = ref.split("/") as [string, string];
    // Only existence matters: the answer's data is dropped at once and never kept.
    if ((await optional("secrets", undefined, () => host.get(P.secrets(ns, name)))) !== undefined) existingSecrets.push(ref);
  }
  return {
    cluster,
    namespace,
    namespaceObject,
    statefulSet,
    pods,
    events,
    pvcs,
    metricsApiService,
    deployments,
    rbac: { roles, roleBindings, clusterRoles, clusterRoleBindings },
    gateways,
    ingressPods,
    existingSecrets,
    ...(certificates ? { certificates } : {}),
    ...(missing ? { missingKinds: missing.map((k) => `${k.apiVersion}/${k.kind}`) } : {}),
    values,
    unreadable,
  };
}
