// Reads the host snapshot `vc doctor` checks: one LIST per kind, secret existence by name only (values dropped), the
// control plane's own configuration (rendered without credentials), and how long each read took.
import { load } from "js-yaml";
import type { KubeObject } from "../../kube/object.js";
import type { Diagnostic } from "../../model/diagnostic.js";
import { formatMatchLabels } from "../../kube/selector.js";
import type { Values } from "../../model/values.js";
import { names } from "../../render/meta.js";
import { SHARED_METRICS_PROXY } from "../../translate/metrics-proxy.js";
import { CONFIG_KEY } from "../../render/secrets.js";
import { KubeStatusStore } from "../../records/status-store.js";
import { KubeApiError } from "../../host/client.js";
import { Discovery } from "../../host/discovery.js";
import { effectiveValues } from "../../validate/values.js";
import type { Host } from "../host.js";
import { HostError } from "../host.js";
import { P, pathOf } from "../paths.js";
import { isForbidden, NOT_VISIBLE, NotVisibleError } from "../visible.js";
import { configOf, hostApiGroupOf, metricsIntegrationEnabled } from "./facts.js";
import { AccessUnknown, reviewAccess } from "./access.js";
import { discoveredKinds } from "./kinds.js";
import { readVirtual } from "./virtual.js";
import {
  API_ENDPOINT_SLICES_PATH,
  API_ENDPOINTS_PATH,
  apiServerEndpoints,
  apiServerSliceAddresses,
  networkPoliciesPath,
  SERVICE_NAME_LABEL,
} from "./network.js";
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
  /**
   * Read inside the virtual cluster (its APIServices, autoscalers' pod metrics) through this server address (default:
   * its kubeconfig's).
   */
  virtualServer?: string;
  /** Skip the reads inside the virtual cluster. */
  skipVirtual?: boolean;
  /** The mesh objects the repository renders for the cluster, to compare with the host's. */
  rendered?: KubeObject[];
  /** The errors of the repository's values files of the cluster, when they do not validate. */
  valuesErrors?: Diagnostic[];
  /** Reads that take at least this long are recorded as slow (default `SLOW_READ_MS`). */
  slowReadMs?: number;
  /** How much of a collection is read (default DOCTOR_LIST_BOUNDS; tests make it small). */
  listBounds?: typeof DOCTOR_LIST_BOUNDS;
}

/**
 * The effective values in the control plane's config Secret; the database endpoint is blanked (only switches are
 * checked).
 */
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

/**
 * How much of a collection doctor reads: a namespace's pods, events and objects are written by its tenant, so every
 * LIST stops at 500 objects or 32 MiB (what was read is checked, and the finding `host-reads-bounded` says so).
 */
const DOCTOR_LIST_BOUNDS = { maxObjects: 500, maxBytes: 32 * 1024 * 1024, pageSize: 100 };

/**
 * The reads of one snapshot: timed, and those only some checks need tolerated (their failure noted as `unreadable`).
 */
interface Reader {
  get(path: string): Promise<KubeObject | undefined>;
  /** A bounded LIST (DOCTOR_LIST_BOUNDS): one stopped at the bound is noted in `bounded`. */
  list(path: string, labelSelector?: string): Promise<KubeObject[]>;
  bounded: NonNullable<HostSnapshot["boundedReads"]>;
  /** Reads what only some checks need; a failure (often 403 for a namespace-scoped user) skips those checks. */
  optional<T>(part: Readable, fallback: T, read: () => Promise<T>): Promise<T>;
  unreadable: Partial<Record<Readable, string>>;
  slowReads: HostSnapshot["slowReads"];
}

function readerOf(host: Host, options: GatherOptions): Reader {
  const unreadable: Partial<Record<Readable, string>> = {};
  const slowReads: HostSnapshot["slowReads"] = [];
  const bounded: NonNullable<HostSnapshot["boundedReads"]> = [];
  const timed = readTimer(slowReads, options.slowReadMs ?? SLOW_READ_MS);
  const bounds = options.listBounds ?? DOCTOR_LIST_BOUNDS;
  return {
    unreadable,
    slowReads,
    bounded,
    get: (path) => timed(path, host.get(path)),
    list: async (path, labelSelector) => {
      const read = await timed(
        path,
        host.listBounded<KubeObject>(path, labelSelector ? { labelSelector } : {}, bounds),
      );
      if (read.stopped) bounded.push({ path, why: read.stopped, read: read.items.length });
      return read.items;
    },
    async optional(part, fallback, read) {
      try {
        return await read();
      } catch (err) {
        unreadable[part] ??=
          err instanceof AccessUnknown ? err.message : isForbidden(err) ? NOT_VISIBLE : (err as Error).message;
        return fallback;
      }
    },
  };
}

const NONE: KubeObject[] = [];

/**
 * Reads the host snapshot of one cluster: the control plane and its namespace first, then what its configuration
 * turns on (metrics, mesh), access, the network, inside the virtual cluster, the record, and what mesh routes and
 * Gateways name elsewhere (services, ingress pods, TLS Secrets).
 */
export async function gatherSnapshot(
  host: Host,
  cluster: string,
  namespace: string,
  values?: Values,
  options: GatherOptions = {},
): Promise<HostSnapshot> {
  const r = readerOf(host, options);
  const core = await readControlPlane(r, cluster, namespace);
  const base = {
    cluster,
    values,
    liveValues: core.liveValues,
    deployments: core.deployments,
    namespaceObject: core.namespaceObject,
  };
  const sharedProxy = metricsIntegrationEnabled(base) ? await readSharedProxy(r) : undefined;
  const facts = { ...base, ...(sharedProxy ? { sharedProxy } : {}) };
  const configured = await readConfigured(r, cluster, namespace, facts);
  const around = await readAround(host, r, cluster, namespace, facts, core.statefulSet, options);
  const services = await readRouteServices(r, namespace, configured);
  const ingress = await readIngress(r, configured.gateways);
  const secrets = await readSecrets(r, namespace, facts, configured.gateways, ingress.pods);
  return {
    cluster,
    namespace,
    ...core,
    metricsApiService: configured.metricsApiService,
    ...(sharedProxy ? { sharedProxy } : {}),
    initManifests: configured.initManifests,
    serviceAccounts: configured.serviceAccounts,
    services,
    virtualServices: configured.virtualServices,
    destinationRules: configured.destinationRules,
    ...(around.access ? { access: around.access } : {}),
    gateways: configured.gateways,
    ingressPods: ingress.pods,
    ingressServices: ingress.services,
    tlsCertificates: secrets.tlsCertificates,
    checkedAt: new Date(options.now ?? Date.now()).toISOString(),
    existingSecrets: secrets.existing,
    slowReads: r.slowReads,
    boundedReads: r.bounded,
    ...(secrets.certificates ? { certificates: secrets.certificates } : {}),
    ...(around.missing ? { missingKinds: around.missing.map((k) => `${k.apiVersion}/${k.kind}`) } : {}),
    ...(options.rendered ? { rendered: options.rendered } : {}),
    ...(options.valuesErrors?.length ? { valuesErrors: options.valuesErrors } : {}),
    ...(around.networkPolicies ? { networkPolicies: around.networkPolicies } : {}),
    ...(around.virtual ? { virtual: around.virtual } : {}),
    ...(around.endpoints ? { apiServerEndpoints: around.endpoints } : {}),
    ...(around.status?.suspendedBy !== undefined ? { suspendedBy: around.status.suspendedBy } : {}),
    values,
    unreadable: r.unreadable,
  };
}

/**
 * A read of the control plane's namespace: a 403 is noted as `part` not visible (the checks needing it skip) and
 * `fallback` returned; any other failure throws.
 */
async function visibleOr<T>(r: Reader, part: Readable, fallback: T, read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if (!isForbidden(err)) throw err;
    r.unreadable[part] ??= NOT_VISIBLE;
    return fallback;
  }
}

/** The control plane's reads noted by visibleOr, and the resources they read (for the error when none is visible). */
const CONTROL_PLANE_READS: ReadonlyArray<[Readable, string]> = [
  ["statefulSet", "statefulsets"],
  ["pods", "pods"],
  ["events", "events"],
  ["volumeClaims", "persistentvolumeclaims"],
  ["deployments", "deployments"],
];

/**
 * The control plane, its namespace, pods, events, claims and Deployments, and the values it runs with. Each of those
 * the caller may not read is noted (unreadable) and the checks that need it skip; only when none is visible is
 * nothing checked (NotVisibleError).
 */
async function readControlPlane(r: Reader, cluster: string, namespace: string) {
  const [namespaceObject, statefulSet, pods, events, pvcs, deployments, liveValues] = await Promise.all([
    r.optional("namespace", undefined, () => r.get(P.namespace(namespace))),
    visibleOr(r, "statefulSet", undefined, r.get(P.statefulSets(namespace, cluster))),
    visibleOr(r, "pods", NONE, r.list(P.pods(namespace))),
    visibleOr(r, "events", NONE, r.list(P.events(namespace))),
    visibleOr(r, "volumeClaims", NONE, r.list(P.pvcs(namespace))),
    visibleOr(r, "deployments", NONE, r.list(P.deployments(namespace))),
    r.optional("config", undefined, async () => {
      try {
        return liveValuesOf(await r.get(P.secrets(namespace, names.configSecret(cluster))));
      } catch (err) {
        if (err instanceof HostError) throw err;
        throw new Error(`the control plane's config Secret ${names.configSecret(cluster)} holds no valid values`);
      }
    }),
  ]);
  if (CONTROL_PLANE_READS.every(([part]) => r.unreadable[part] !== undefined))
    throw new NotVisibleError(namespace, CONTROL_PLANE_READS.map(([, resource]) => resource).join(", "));
  return {
    namespaceObject,
    statefulSet,
    pods: r.unreadable.pods ? pods : await withOwnPods(r, namespace, statefulSet, pods),
    events,
    pvcs,
    deployments,
    liveValues,
  };
}

/**
 * The namespace's pods with the StatefulSet's own read by name (`<name>-<ordinal>`): a bounded LIST of a namespace
 * full of the tenant's pods may stop before them.
 */
async function withOwnPods(
  r: Reader,
  namespace: string,
  statefulSet: KubeObject | undefined,
  pods: KubeObject[],
): Promise<KubeObject[]> {
  if (!statefulSet) return pods;
  const replicas = Number((statefulSet.spec as { replicas?: number } | undefined)?.replicas ?? 1);
  const have = new Set(pods.map((p) => p.metadata.name));
  const want = Array.from(
    { length: Math.min(Math.max(replicas, 1), 5) },
    (_, i) => `${statefulSet.metadata.name}-${i}`,
  );
  const more = await Promise.all(want.filter((n) => !have.has(n)).map((n) => r.get(P.pods(namespace, n))));
  return [...pods, ...more.filter((p): p is KubeObject => p !== undefined)];
}

/**
 * The host's shared metrics proxy: its Deployment and status ConfigMap in vc-system (who may not read there: not read).
 */
async function readSharedProxy(r: Reader): Promise<HostSnapshot["sharedProxy"]> {
  const ns = SHARED_METRICS_PROXY.namespace;
  return r.optional("sharedProxy", undefined, async () => {
    const [deployment, status, tls] = await Promise.all([
      r.get(P.deployments(ns, SHARED_METRICS_PROXY.name)),
      r.get(P.configMaps(ns, SHARED_METRICS_PROXY.statusConfigMap)),
      // Whether it exists; nothing of its content is kept.
      r.get(P.secrets(ns, SHARED_METRICS_PROXY.tlsSecret)),
    ]);
    return { ...(deployment ? { deployment } : {}), ...(status ? { status } : {}), tlsSecret: tls !== undefined };
  });
}

type Facts = Parameters<typeof metricsIntegrationEnabled>[0] & Parameters<typeof configOf>[0];

/** What the configuration turns on: the metrics API service and init manifests, mesh objects; accounts and services. */
async function readConfigured(r: Reader, cluster: string, namespace: string, facts: Facts) {
  const metricsOn = metricsIntegrationEnabled(facts);
  // Mesh objects are read while the mesh integration is on, or not known to be off.
  const meshOn = configOf(facts)?.integrations.mesh.enabled ?? true;
  const mesh = (kind: "VirtualService" | "DestinationRule" | "Gateway", part: Readable) =>
    meshOn ? r.optional(part, NONE, () => r.list(P.mesh(kind, namespace))) : NONE;
  const [
    metricsApiService,
    initManifests,
    gateways,
    serviceAccounts,
    localServices,
    virtualServices,
    destinationRules,
  ] = await Promise.all([
    metricsOn
      ? r.optional("apiService", undefined, () => r.get(P.apiService(hostMetricsApiService(facts))))
      : undefined,
    metricsOn
      ? r.optional("initManifests", undefined, () => r.get(P.configMaps(namespace, names.initManifests(cluster))))
      : undefined,
    mesh("Gateway", "gateways"),
    r.optional("serviceAccounts", NONE, () => r.list(pathOf("v1", "ServiceAccount", namespace))),
    r.optional("services", NONE, () => r.list(P.services(namespace))),
    mesh("VirtualService", "mesh"),
    mesh("DestinationRule", "mesh"),
  ]);
  return {
    metricsOn,
    metricsApiService,
    initManifests,
    gateways,
    serviceAccounts,
    localServices,
    virtualServices,
    destinationRules,
  };
}

/** Access reviews, the network, inside the virtual cluster, the cluster's record and the kinds the host serves. */
async function readAround(
  host: Host,
  r: Reader,
  cluster: string,
  namespace: string,
  facts: Facts,
  statefulSet: KubeObject | undefined,
  options: GatherOptions,
) {
  const questions = [
    ...metricsAccessQuestions({ ...facts, namespace, statefulSet }),
    ...syncerAccessQuestions({ ...facts, namespace, statefulSet }),
  ];
  const access = questions.length
    ? await r.optional("access", undefined, () => reviewAccess(host, questions))
    : undefined;
  const networkPolicies = await r.optional("networkPolicies", undefined, () => r.list(networkPoliciesPath(namespace)));
  // The syncer's egress is judged only against addresses known; who may not read them gets no egress finding.
  const endpoints = networkPolicies?.length
    ? await r.optional("networkPolicies", undefined, () => apiServerAddresses(host, r))
    : undefined;
  // Inside the virtual cluster, while a metrics source serves it: its APIService list and the autoscalers' pod metrics.
  const metricsServed = metricsIntegrationEnabled(facts) || (configOf(facts)?.deploy.metricsServer.enabled ?? false);
  const virtual =
    metricsServed && !options.skipVirtual && statefulSet
      ? await r.optional("virtual", undefined, () => readVirtual(host, cluster, namespace, options.virtualServer))
      : undefined;
  // Suspension is read through vc's status store (wherever it keeps the cluster's records).
  const status = await r.optional("status", undefined, () =>
    new KubeStatusStore(host.client).read(cluster, namespace).catch((err: unknown) => {
      throw err instanceof KubeApiError ? new HostError(err.status, "", err.message) : err;
    }),
  );
  const missing = await r.optional("discovery", undefined, () =>
    new Discovery(host.client).missing(discoveredKinds(hostApiGroupOf(facts))),
  );
  return { access, networkPolicies, endpoints, virtual, status, missing };
}

/**
 * The host API server's addresses: the `kubernetes` Service's EndpointSlices where discovery lists discovery.k8s.io/v1
 * EndpointSlice (v1 Endpoints are deprecated from 1.33), else its Endpoints (1.20).
 */
async function apiServerAddresses(host: Host, r: Reader): Promise<Array<{ ip: string; port: number }>> {
  if (await new Discovery(host.client).serves("discovery.k8s.io/v1", "EndpointSlice"))
    return apiServerSliceAddresses(await r.list(API_ENDPOINT_SLICES_PATH, `${SERVICE_NAME_LABEL}=kubernetes`));
  return apiServerEndpoints(await r.get(API_ENDPOINTS_PATH));
}

/** The namespace's Services, and those of other namespaces that mesh routes name (looked up by name). */
async function readRouteServices(
  r: Reader,
  namespace: string,
  c: Awaited<ReturnType<typeof readConfigured>>,
): Promise<KubeObject[]> {
  const services = [...c.localServices];
  const meshNamespaces = meshNamespacesOnHost(namespace, [...c.virtualServices, ...c.destinationRules, ...c.gateways]);
  const elsewhere = new Set(
    c.virtualServices.flatMap((vs) =>
      destinationHosts(vs).map((h) => serviceRef(h, vs.metadata.namespace ?? namespace, meshNamespaces) ?? ""),
    ),
  );
  for (const ref of [...elsewhere].sort()) {
    const [ns, name] = ref.split("/") as [string, string];
    if (!ref || ns === namespace) continue;
    const svc = await r.optional("services", undefined, () => r.get(P.services(ns, name)));
    if (svc) services.push(svc);
  }
  return services;
}

/** The pods the Gateways' selectors match, in any namespace, and the Services of their namespaces. */
async function readIngress(
  r: Reader,
  gateways: readonly KubeObject[],
): Promise<{ pods: KubeObject[]; services: KubeObject[] }> {
  const pods: KubeObject[] = [];
  const seen = new Set<string>();
  for (const gw of gateways) {
    const selector = (gw as { spec?: { selector?: Record<string, string> } }).spec?.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    for (const p of await r.optional("ingressPods", NONE, () => r.list(P.allPods(), formatMatchLabels(selector)))) {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      if (!seen.has(key)) pods.push(p), seen.add(key);
    }
  }
  const services: KubeObject[] = [];
  for (const ns of [...new Set(pods.map((p) => p.metadata.namespace ?? ""))].sort()) {
    services.push(...(await r.optional("ingressServices", NONE, () => r.list(P.services(ns)))));
  }
  return { pods, services };
}

/**
 * The Secrets the checks name: a Gateway's TLS Secret (only its certificate's facts are kept, never the key); of the
 * others, existence. The Certificates, when a Gateway names a Secret and cert-manager is on.
 */
async function readSecrets(
  r: Reader,
  namespace: string,
  facts: Facts,
  gateways: readonly KubeObject[],
  ingressPods: KubeObject[],
) {
  // A host without cert-manager answers 404: none.
  const namesSecret = gateways.some((gw) =>
    ((gw.spec as { servers?: Array<{ tls?: { credentialName?: string } }> } | undefined)?.servers ?? []).some(
      (sv) => sv.tls?.credentialName,
    ),
  );
  const certManager = configOf(facts)?.integrations.certManager.enabled ?? true;
  const certificates =
    namesSecret && certManager
      ? await r.optional("certificates", undefined, () => r.list(P.certificates(namespace)))
      : undefined;
  const credentials = credentialLookups({ namespace, gateways: [...gateways], ingressPods });
  const lookups = [...credentials];
  const existing: string[] = [];
  const tlsCertificates: Record<string, CertificateFacts> = {};
  for (const ref of lookups) {
    const [ns, name] = ref.split("/") as [string, string];
    const secret = await r.optional("secrets", undefined, () => r.get(P.secrets(ns, name)));
    if (secret === undefined) continue;
    existing.push(ref);
    if (credentials.includes(ref)) tlsCertificates[ref] = certificateFacts(secret);
  }
  return { certificates, existing, tlsCertificates };
}
