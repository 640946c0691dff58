// Reads the host snapshot `vc doctor` checks: one LIST per kind, secret existence by name only (values dropped), the
// control plane's own configuration (rendered without credentials), and how long each read took.
import { load } from "js-yaml";
import type { KubeObject } from "../../kube/object.js";
import { formatMatchLabels } from "../../kube/selector.js";
import type { Values } from "../../model/values.js";
import { names } from "../../render/meta.js";
import { CONFIG_KEY } from "../../render/secrets.js";
import { KubeStatusStore } from "../../records/status-store.js";
import { KubeApiError } from "../../host/client.js";
import { Discovery } from "../../host/discovery.js";
import { effectiveValues } from "../../validate/values.js";
import type { Host } from "../host.js";
import { HostError } from "../host.js";
import { P, pathOf } from "../paths.js";
import { isForbidden, NOT_VISIBLE, visibleOrThrow } from "../visible.js";
import { configOf, hostApiGroupOf, metricsIntegrationEnabled } from "./facts.js";
import { AccessUnknown, reviewAccess } from "./access.js";
import { discoveredKinds } from "./kinds.js";
import { readVirtual } from "./virtual.js";
import { API_ENDPOINTS_PATH, apiServerEndpoints, networkPoliciesPath } from "./network.js";
import { metricsAccessQuestions } from "./metrics-rbac.js";
import { syncerAccessQuestions } from "./syncer.js";
import { credentialLookups } from "./mesh.js";
import { certificateFacts, type CertificateFacts } from "./tls-cert.js";
import { hostMetricsApiService } from "./metrics.js";
import { destinationHosts, meshNamespacesOnHost, serviceRef } from "./routes.js";
import { SLOW_READ_MS } from "./timeouts.js";
import type { HostSnapshot, Readable } from "./types.js";

export interface GatherOptions {
  /** The time certificates are judged at (ms since the epoch; default now). */
  now?: number;
  /** Read inside the virtual cluster (its APIServices, autoscalers' pod metrics) through this server address (default: its kubeconfig's). */
  virtualServer?: string;
  /** Skip the reads inside the virtual cluster. */
  skipVirtual?: boolean;
  /** The mesh objects the repository renders for the cluster, to compare with the host's. */
  rendered?: KubeObject[];
  /** Reads that take at least this long are recorded as slow (default `SLOW_READ_MS`). */
  slowReadMs?: number;
}

/** The effective values in the control plane's config Secret; the database endpoint is blanked (only switches are checked). */
function liveValuesOf(secret: KubeObject | undefined): Values | undefined {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data?.[CONFIG_KEY];
  if (data === undefined) return undefined;
  const values = effectiveValues(load(Buffer.from(data, "base64").toString("utf8"), { maxAliases: 100 }));
  values.controlPlane.backingStore.database.external.endpoint = "";
  return values;
}

/**
 * Times reads with `now` (milliseconds; tests pass their own clock) and records in `slowReads` each read of `path` that
 * took at least `slowMs`, failed or not.
 */
export function readTimer(
  slowReads: HostSnapshot["slowReads"],
  slowMs: number,
  now: () => number = () => performance.now(),
) {
  return async <T>(path: string, read: Promise<T>): Promise<T> => {
    const start = now();
    try {
      return await read;
    } finally {
      const ms = Math.round(now() - start);
      if (ms >= slowMs) slowReads.push({ path, ms });
    }
  };
}

export async function gatherSnapshot(
  host: Host,
  cluster: string,
  namespace: string,
  values?: Values,
  options: GatherOptions = {},
): Promise<HostSnapshot> {
  const unreadable: Partial<Record<Readable, string>> = {};
  const slowReads: HostSnapshot["slowReads"] = [];
  const timed = readTimer(slowReads, options.slowReadMs ?? SLOW_READ_MS);
  const get = (path: string) => timed(path, host.get(path));
  const list = (path: string, labelSelector?: string) =>
    timed(path, host.list(path, labelSelector ? { labelSelector } : {}));
  /** Reads what only some checks need; a failure (often 403 for a namespace-scoped user) skips those checks. */
  const optional = async <T>(part: Readable, fallback: T, read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      unreadable[part] ??=
        err instanceof AccessUnknown
          ? err.message
          : isForbidden(err)
            ? NOT_VISIBLE
            : err instanceof HostError
              ? err.message
              : (err as Error).message;
      return fallback;
    }
  };
  const none: KubeObject[] = [];
  const [namespaceObject, statefulSet, pods, events, pvcs, deployments, liveValues] = await Promise.all([
    optional("namespace", undefined, () => get(P.namespace(namespace))),
    visibleOrThrow(namespace, "statefulsets", get(P.statefulSets(namespace, cluster))),
    visibleOrThrow(namespace, "pods", list(P.pods(namespace))),
    visibleOrThrow(namespace, "events", list(P.events(namespace))),
    visibleOrThrow(namespace, "persistentvolumeclaims", list(P.pvcs(namespace))),
    visibleOrThrow(namespace, "deployments", list(P.deployments(namespace))),
    optional("config", undefined, async () => {
      try {
        return liveValuesOf(await get(P.secrets(namespace, names.configSecret(cluster))));
      } catch (err) {
        if (err instanceof HostError) throw err;
        throw new Error(`the control plane's config Secret ${names.configSecret(cluster)} holds no valid values`);
      }
    }),
  ]);
  const facts = { cluster, values, liveValues, deployments };
  const metricsOn = metricsIntegrationEnabled(facts);
  // Mesh objects are read while the mesh integration is on, or not known to be off.
  const meshOn = configOf(facts)?.integrations.mesh.enabled ?? true;
  const mesh = (kind: "VirtualService" | "DestinationRule" | "Gateway", part: Readable) =>
    meshOn ? optional(part, none, () => list(P.mesh(kind, namespace))) : none;
  const [
    metricsApiService,
    initManifests,
    gateways,
    serviceAccounts,
    localServices,
    virtualServices,
    destinationRules,
  ] = await Promise.all([
    metricsOn ? optional("apiService", undefined, () => get(P.apiService(hostMetricsApiService(facts)))) : undefined,
    metricsOn
      ? optional("initManifests", undefined, () => get(P.configMaps(namespace, names.initManifests(cluster))))
      : undefined,
    mesh("Gateway", "gateways"),
    optional("serviceAccounts", none, () => list(pathOf("v1", "ServiceAccount", namespace))),
    optional("services", none, () => list(P.services(namespace))),
    mesh("VirtualService", "mesh"),
    mesh("DestinationRule", "mesh"),
  ]);
  const questions = [
    ...metricsAccessQuestions({ ...facts, namespace, statefulSet }),
    ...syncerAccessQuestions({ ...facts, namespace, statefulSet }),
  ];
  const access = questions.length
    ? await optional("access", undefined, () => reviewAccess(host, questions))
    : undefined;
  const networkPolicies = await optional("networkPolicies", undefined, () => list(networkPoliciesPath(namespace)));
  // The syncer's egress is judged only against addresses known; who may not read them gets no egress finding.
  const endpoints = networkPolicies?.length
    ? await optional("networkPolicies", undefined, () => get(API_ENDPOINTS_PATH))
    : undefined;
  // Inside the virtual cluster, while a metrics source serves it: its APIService list and the autoscalers' pod metrics.
  const metricsServed = metricsOn || (configOf(facts)?.deploy.metricsServer.enabled ?? false);
  const virtual =
    metricsServed && !options.skipVirtual && statefulSet
      ? await optional("virtual", undefined, () => readVirtual(host, cluster, namespace, options.virtualServer))
      : undefined;
  // Suspension is read through vc's status store (wherever it keeps the cluster's records).
  const status = await optional("status", undefined, () =>
    new KubeStatusStore(host.client).read(cluster, namespace).catch((err: unknown) => {
      throw err instanceof KubeApiError ? new HostError(err.status, "", err.message) : err;
    }),
  );
  const missing = await optional("discovery", undefined, () =>
    new Discovery(host.client).missing(discoveredKinds(hostApiGroupOf(facts))),
  );
  // Services in other namespaces that routes name: looked up by name.
  const services = [...localServices];
  const meshNamespaces = meshNamespacesOnHost(namespace, [...virtualServices, ...destinationRules, ...gateways]);
  const elsewhere = new Set(
    virtualServices.flatMap((vs) =>
      destinationHosts(vs).map((h) => serviceRef(h, vs.metadata.namespace ?? namespace, meshNamespaces) ?? ""),
    ),
  );
  for (const ref of [...elsewhere].sort()) {
    const [ns, name] = ref.split("/") as [string, string];
    if (!ref || ns === namespace) continue;
    const svc = await optional("services", undefined, () => get(P.services(ns, name)));
    if (svc) services.push(svc);
  }
  // Certificates matter only for Gateways that name a TLS Secret, while the cluster's configuration (when known) has the
  // certificate-manager integration on; a host without cert-manager answers 404: none.
  const namesSecret = gateways.some((gw) =>
    ((gw.spec as { servers?: Array<{ tls?: { credentialName?: string } }> } | undefined)?.servers ?? []).some(
      (sv) => sv.tls?.credentialName,
    ),
  );
  const certManager = configOf(facts)?.integrations.certManager.enabled ?? true;
  const certificates =
    namesSecret && certManager
      ? await optional("certificates", undefined, () => list(P.certificates(namespace)))
      : undefined;
  const ingressPods: KubeObject[] = [];
  const seen = new Set<string>();
  for (const gw of gateways) {
    const selector = (gw as { spec?: { selector?: Record<string, string> } }).spec?.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    for (const p of await optional("ingressPods", none, () => list(P.allPods(), formatMatchLabels(selector)))) {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      if (!seen.has(key)) ingressPods.push(p), seen.add(key);
    }
  }
  const ingressServices: KubeObject[] = [];
  for (const ns of [...new Set(ingressPods.map((p) => p.metadata.namespace ?? ""))].sort()) {
    ingressServices.push(...(await optional("ingressServices", none, () => list(P.services(ns)))));
  }
  const credentials = credentialLookups({ namespace, gateways, ingressPods });
  const lookups = [...credentials];
  if (metricsOn) lookups.push(`${namespace}/${names.metricsProxyTls(cluster)}`);
  const existingSecrets: string[] = [];
  const tlsCertificates: Record<string, CertificateFacts> = {};
  for (const ref of lookups) {
    const [ns, name] = ref.split("/") as [string, string];
    // Of a Gateway's Secret only the certificate's facts are kept (never the key); of the others, existence.
    const secret = await optional("secrets", undefined, () => get(P.secrets(ns, name)));
    if (secret === undefined) continue;
    existingSecrets.push(ref);
    if (credentials.includes(ref)) tlsCertificates[ref] = certificateFacts(secret);
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
    initManifests,
    liveValues,
    deployments,
    serviceAccounts,
    services,
    virtualServices,
    destinationRules,
    ...(access ? { access } : {}),
    gateways,
    ingressPods,
    ingressServices,
    tlsCertificates,
    checkedAt: new Date(options.now ?? Date.now()).toISOString(),
    existingSecrets,
    slowReads,
    ...(certificates ? { certificates } : {}),
    ...(missing ? { missingKinds: missing.map((k) => `${k.apiVersion}/${k.kind}`) } : {}),
    ...(options.rendered ? { rendered: options.rendered } : {}),
    ...(networkPolicies ? { networkPolicies } : {}),
    ...(virtual ? { virtual } : {}),
    ...(endpoints ? { apiServerEndpoints: apiServerEndpoints(endpoints) } : {}),
    ...(status?.suspendedBy !== undefined ? { suspendedBy: status.suspendedBy } : {}),
    values,
    unreadable,
  };
}
