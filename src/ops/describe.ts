// `vc describe`: one virtual cluster's configuration and live state on the host, gathered into one report.
import { escapeControls } from "../model/escape.js";
import type { KubeObject } from "../kube/object.js";
import { LABELS, ANNOTATIONS, CHART_APP_LABEL } from "../translate/keys.js";
import { formatMatchLabels } from "../kube/selector.js";
import type { Values } from "../model/values.js";
import { shortRevision } from "../git/dirty.js";
import { actorOf, appliedBy, fromData, type Reconciliation } from "../records/status.js";
import { RecordStore } from "../records/store.js";
import { recordsNamespace } from "../translate/keys.js";
import { HostError, type Host } from "./host.js";
import { KubeApiError } from "../host/client.js";
import { isForbidden } from "./visible.js";
import { P } from "./paths.js";
import { METRICS_GROUP, METRICS_VERSION } from "../kube/resources.js";
import { maskValues } from "../model/secrets.js";
import { controlPlaneState, type ControlPlaneInfo } from "./cp-state.js";
import { restorePodName } from "./restore.js";
import { suspendedBy } from "./suspend.js";
import { load } from "js-yaml";
import { names } from "../render/meta.js";
import { CONFIG_KEY } from "../render/secrets.js";
import { effectiveValues } from "../validate/values.js";

interface MeshObject {
  kind: string;
  hostName: string;
  virtualName?: string;
  virtualNamespace?: string;
  sourceFile?: string;
  revision?: string;
}

export interface Description {
  cluster: string;
  namespace: string;
  hostContext: string;
  controlPlane: ControlPlaneInfo & { pods: Array<{ name: string; phase: string; restarts: number }> };
  images: string[];
  reconcile: {
    lastAppliedRevision?: string;
    lastAppliedTime?: string;
    lastAttemptedRevision?: string;
    result?: string;
    message?: string;
    suspendedBy?: string;
    /** Who applied the live revision: `reconciler`, or `alice (vc apply)`. */
    lastAppliedBy?: string;
    history: Array<Pick<Reconciliation, "revision" | "time" | "result"> & { by: string }>;
  };
  mesh: MeshObject[];
  metricsApi: { service: string; state: string };
  /** Effective values with secrets masked; undefined when the repository has no valid folder for the cluster. */
  config?: Values;
  configNote?: string;
  /** The cluster's health (src/health), when vc knows what the host should hold (a valid folder of the repository). */
  health?: { status: string; reason?: string; objects: Array<{ object: string; status: string; reason?: string }> };
  /** What the user may not read on the host (403), e.g. "pods in vc-x": shown as not visible, never an error. */
  notVisible: string[];
}

const MESH_KINDS = ["Gateway", "VirtualService", "DestinationRule"] as const;

function imagesOf(obj: KubeObject | undefined): string[] {
  const spec = (
    obj?.spec as
      | { template?: { spec?: { containers?: Array<{ image?: string }>; initContainers?: Array<{ image?: string }> } } }
      | undefined
  )?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]
    .map((c) => c.image ?? "")
    .filter((i) => i !== "");
}

/** The metrics API service's state in words: available, unavailable (reason), absent. */
function apiServiceState(svc: KubeObject | undefined): string {
  if (!svc) return "absent";
  const c = (
    (svc.status as { conditions?: Array<{ type: string; status: string; reason?: string }> } | undefined)?.conditions ??
    []
  ).find((x) => x.type === "Available");
  if (c?.status === "True") return "available";
  return `unavailable${c?.reason ? ` (${c.reason})` : ""}`;
}

export async function describeCluster(
  host: Host,
  o: { cluster: string; namespace: string; values?: Values; valuesNote?: string },
): Promise<Description> {
  const ns = o.namespace;
  // The host's APIService of the metrics group the integration reads (configured; the default when values are unknown).
  const metricsService = `${METRICS_VERSION}.${o.values?.integrations.metricsServer.proxy.hostApiGroup ?? METRICS_GROUP}`;
  const owned = { labelSelector: `${LABELS.managedBy}=${o.cluster}` };
  const notVisible: string[] = [];
  // What the user may not read (403) is listed as not visible; the rest of the description still stands.
  const read = <T>(what: string, answer: Promise<T>, fallback: T): Promise<T> =>
    answer.catch((err: unknown) => {
      if (!isForbidden(err)) throw err;
      notVisible.push(what);
      return fallback;
    });
  const [sts, pods, restorePod, statusCm, deployments, apiService, ...mesh] = await Promise.all([
    read(`statefulsets in ${ns}`, host.get(P.statefulSets(ns, o.cluster)), undefined),
    read(
      `pods in ${ns}`,
      host.list(P.pods(ns), { labelSelector: formatMatchLabels({ release: o.cluster, app: CHART_APP_LABEL }) }),
      [],
    ),
    read(`pods in ${ns}`, host.get(P.pods(ns, restorePodName(o.cluster))), undefined),
    read(
      `vc's records (configmaps in ${recordsNamespace()})`,
      new RecordStore(host.client).holderConfigMaps(o.cluster).then(
        (m) => m.get(o.cluster),
        (err: unknown) => {
          throw err instanceof KubeApiError ? new HostError(err.status, "", err.message) : err;
        },
      ),
      undefined,
    ),
    read(`deployments in ${ns}`, host.list(P.deployments(ns), owned), []),
    read("apiservices (cluster scope)", host.get(P.apiService(metricsService)), undefined),
    ...MESH_KINDS.map((k) => read(`${k.toLowerCase()}s in ${ns}`, host.list(P.mesh(k, ns), owned), [])),
  ]);
  const status = fromData(statusCm?.data as Record<string, string> | undefined, o.cluster, ns);
  const meshObjects: MeshObject[] = mesh.flatMap((items, i) =>
    items.map((m) => {
      const a = m.metadata.annotations ?? {};
      return {
        kind: MESH_KINDS[i]!,
        hostName: m.metadata.name,
        virtualName: a[ANNOTATIONS.objectName],
        virtualNamespace: a[ANNOTATIONS.objectNamespace],
        sourceFile: a[ANNOTATIONS.sourceFile],
        revision: a[ANNOTATIONS.revision],
      };
    }),
  );
  meshObjects.sort((a, b) => a.kind.localeCompare(b.kind) || a.hostName.localeCompare(b.hostName));
  const images = [...new Set([...imagesOf(sts), ...deployments.flatMap(imagesOf)])].sort();
  return {
    cluster: o.cluster,
    namespace: ns,
    hostContext: host.contextName,
    controlPlane: {
      ...controlPlaneState(sts, pods, restorePod, statusCm),
      pods: pods.map((p) => {
        const st = p.status as { phase?: string; containerStatuses?: Array<{ restartCount?: number }> } | undefined;
        return {
          name: p.metadata.name,
          phase: st?.phase ?? "Unknown",
          restarts: (st?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0),
        };
      }),
    },
    images,
    reconcile: {
      lastAppliedRevision: status?.lastAppliedRevision,
      lastAppliedTime: status?.lastAppliedTime,
      lastAppliedBy: status?.lastAppliedRevision ? appliedBy(status) : undefined,
      lastAttemptedRevision: status?.lastAttemptedRevision,
      result: status?.result,
      message: status?.message,
      suspendedBy: suspendedBy(statusCm),
      history: (status?.history ?? []).map((h) => ({
        revision: h.revision,
        time: h.time,
        result: h.result,
        by: actorOf(h),
      })),
    },
    mesh: meshObjects,
    metricsApi: { service: metricsService, state: apiServiceState(apiService) },
    config: o.values ? maskValues(o.values) : undefined,
    configNote: o.values ? undefined : o.valuesNote,
    notVisible: [...new Set(notVisible)].sort(),
  };
}

/**
 * The effective values the control plane runs with, from its config Secret `vc-config-<name>` on the host (what
 * `vc describe --config-only` shows outside a repository), secrets masked. Undefined when the Secret does not exist.
 */
export async function hostConfig(host: Host, cluster: string, namespace: string): Promise<Values | undefined> {
  const name = names.configSecret(cluster);
  const secret = await host.get<{ data?: Record<string, string> }>(P.secrets(namespace, name));
  if (!secret) return undefined;
  const text = secret.data?.[CONFIG_KEY];
  if (text === undefined) throw new Error(`the config Secret ${namespace}/${name} has no key ${CONFIG_KEY}`);
  try {
    return maskValues(effectiveValues(load(Buffer.from(text, "base64").toString("utf8"), { maxAliases: 100 })));
  } catch (err) {
    throw new Error(
      `the config Secret ${namespace}/${name} holds no valid values (${(err as Error).message.split("\n")[0]})`,
    );
  }
}

/** Drops undefined fields (for YAML/JSON output). */
export function compact<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The human-readable form: one line per fact, host text with its control characters shown escaped (model/escape.ts).
 */
export function formatDescription(d: Description): string {
  const short = (rev?: string) => (rev ? shortRevision(rev) : "(none)");
  const lines = [
    `Name:            ${d.cluster}`,
    `Host namespace:  ${d.namespace}`,
    `Host context:    ${d.hostContext}`,
    `Control plane:   ${d.controlPlane.state} (${d.controlPlane.ready}/${d.controlPlane.desired} ready)`,
    ...d.controlPlane.pods.map((p) => `  ${p.name}: ${p.phase}, ${p.restarts} restart(s)`),
    ...(d.health
      ? [
          `Health:          ${d.health.status}${d.health.reason ? `: ${d.health.reason}` : ""}`,
          ...d.health.objects
            .filter((o) => o.status !== "Healthy")
            .map((o) => `  ${o.object}: ${o.status}${o.reason ? ` (${o.reason})` : ""}`),
        ]
      : []),
    `Images:`,
    ...(d.images.length ? d.images.map((i) => `  ${i}`) : ["  (none)"]),
    `Reconcile:`,
    `  last applied:  ` +
      `${short(d.reconcile.lastAppliedRevision)}${d.reconcile.lastAppliedTime ? ` at ${d.reconcile.lastAppliedTime}` : ""}${d.reconcile.lastAppliedBy ? ` by ${d.reconcile.lastAppliedBy}` : ""}`,
    `  last result:   ${d.reconcile.result ?? "(none)"}${d.reconcile.message ? `: ${d.reconcile.message}` : ""}`,
    ...(d.reconcile.suspendedBy ? [`  suspended:     ${d.reconcile.suspendedBy}`] : []),
    `Revisions:`,
    ...(d.reconcile.history.length
      ? d.reconcile.history.map((h) => `  ${short(h.revision)}  ${h.time}  ${h.result}  ${h.by}`)
      : ["  (none)"]),
    `Mesh objects on the host:`,
    ...(d.mesh.length
      ? d.mesh.map(
          (m) =>
            `  ${m.kind} ` +
            `${m.hostName}${m.virtualName ? ` <- ${m.virtualNamespace ?? "?"}/${m.virtualName}` : ""}${m.sourceFile ? ` (${m.sourceFile})` : ""}`,
        )
      : ["  (none)"]),
    `Metrics API:     ${d.metricsApi.service} ${d.metricsApi.state}`,
    `Config:          ` +
      `${d.config ? "effective values below (secrets masked)" : `unknown: ${d.configNote ?? "no repository folder"}`}`,
    ...(d.notVisible.length ? [`Not visible to you (no permission to read): ${d.notVisible.join(", ")}`] : []),
  ];
  return `${lines.map(escapeControls).join("\n")}\n`;
}
