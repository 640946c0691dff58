// `vc list`: the repository's clusters joined with their live host state (a few fleet-wide LISTs and one plan per cluster).
import type { KubeObject } from "../kube/object.js";
import { CHART_APP_LABEL, LABELS } from "../translate/keys.js";
import { appliedBy, fromData } from "../reconciler/status.js";
import { STATUS_CONFIGMAP, STATUS_LABEL } from "../reconciler/status-store.js";
import { hasChanges } from "../plan/build.js";
import { loadDesired } from "../target/desired.js";
import { planFleet } from "../target/fleet.js";
import { KubeTarget } from "../target/kube/target.js";
import { KubeApiError } from "../target/kube/client.js";
import { HostError, type KubeHost } from "./host.js";
import { listVisible, NOT_VISIBLE, unlessForbidden } from "./visible.js";
import { pathOf } from "./paths.js";
import { controlPlaneState, type ControlPlaneState } from "./cp-state.js";
import { restorePodName } from "./restore.js";
import { readClusterHealth } from "../health/read.js";
import type { HealthStatus } from "../health/types.js";
import { mapLimit } from "../target/pool.js";

export interface ListRow {
  name: string;
  namespace: string;
  /** "unknown" when the user may not read the cluster's host namespace. */
  controlPlane: ControlPlaneState | "unknown";
  /** `ready/desired` control-plane replicas. */
  ready: string;
  lastAppliedRevision?: string;
  /** Who applied it: `reconciler`, or the user of a vc apply (`alice (vc apply)`). */
  lastAppliedBy?: string;
  result?: string;
  /** yes: the host differs from the repository; no: in sync; invalid: the folder fails validation; unknown: could not plan. */
  drift: "yes" | "no" | "invalid" | "unknown";
  /** The cluster's health on the host (src/health), and the first reason when not Healthy. */
  health: HealthStatus;
  healthReason?: string;
  note?: string;
}

const key = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

export async function listClusters(host: KubeHost, root: string, revision: string): Promise<ListRow[]> {
  const desired = await loadDesired(root, revision);
  const namespaces = [...desired.known.values()];
  const kind = (apiVersion: string, k: string) => (ns?: string) => pathOf(apiVersion, k, ns);
  const [sets, cps, restoring, maps, planned] = await Promise.all([
    listVisible<KubeObject>(host, kind("apps/v1", "StatefulSet"), namespaces, { labelSelector: LABELS.managedBy }),
    listVisible<KubeObject>(host, kind("v1", "Pod"), namespaces, { labelSelector: `app=${CHART_APP_LABEL},release` }),
    listVisible<KubeObject>(host, kind("v1", "Pod"), namespaces, { labelSelector: `app=vc-restore,${LABELS.managedBy}` }),
    listVisible<KubeObject>(host, kind("v1", "ConfigMap"), namespaces, { labelSelector: `${STATUS_LABEL}=true` }),
    // The plan reads every cluster's inventory across namespaces: a user who may not has no drift column.
    unlessForbidden(planFleet(new KubeTarget(host.client), desired, { prune: true, allowMassPrune: true }).catch((err: unknown) => {
      throw err instanceof KubeApiError ? new HostError(err.status, "", err.message) : err;
    })),
  ]);
  const hidden = new Set([...sets.hidden, ...cps.hidden, ...maps.hidden]);
  const [statefulSets, cpPods, restorePods, statusMaps] = [sets.items, cps.items, restoring.items, maps.items];
  const report = planned ?? { plans: [], errors: [] };
  const byKey = (items: KubeObject[]) => new Map(items.map((o) => [key(o), o]));
  const sts = byKey(statefulSets);
  const restores = byKey(restorePods);
  const statuses = byKey(statusMaps.filter((c) => c.metadata.name === STATUS_CONFIGMAP));
  const plans = new Map(report.plans.map((p) => [p.cluster, p]));
  const errors = new Map(report.errors.map((e) => [e.cluster, e.message]));
  const valid = new Map(desired.clusters.map((c) => [c.name, c]));

  // Health of each valid cluster whose namespace the user may read: a few reads per cluster, 8 clusters at once.
  const healthOf = new Map<string, { status: HealthStatus; reason?: string }>();
  const readable = desired.clusters.filter((c) => !hidden.has(c.hostNamespace));
  await mapLimit(readable, 8, async (c) => {
    const h = await readClusterHealth(host.client, c.hostNamespace, c.objects);
    healthOf.set(c.name, { status: h.status, ...(h.reason ? { reason: h.reason } : {}) });
  });

  return [...desired.known.keys()].sort().map((name) => {
    const ns = desired.known.get(name)!;
    if (hidden.has(ns)) return { name, namespace: ns, controlPlane: "unknown", ready: "-", drift: "unknown", health: "Unknown", note: `${NOT_VISIBLE} (namespace ${ns})` } satisfies ListRow;
    const statusCm = statuses.get(`${ns}/${STATUS_CONFIGMAP}`);
    const status = fromData(statusCm?.data as Record<string, string> | undefined, name, ns);
    const pods = cpPods.filter((p) => p.metadata.namespace === ns && p.metadata.labels?.release === name);
    const cp = controlPlaneState(sts.get(`${ns}/${name}`), pods, restores.get(`${ns}/${restorePodName(name)}`), statusCm);
    const plan = plans.get(name);
    const row: ListRow = {
      name,
      namespace: ns,
      controlPlane: cp.state,
      ready: `${cp.ready}/${cp.desired}`,
      drift: !valid.has(name) ? "invalid" : plan ? (hasChanges(plan) ? "yes" : "no") : "unknown",
      health: healthOf.get(name)?.status ?? "Unknown",
    };
    const health = healthOf.get(name);
    if (health?.reason) row.healthReason = health.reason;
    if (status?.lastAppliedRevision) {
      row.lastAppliedRevision = status.lastAppliedRevision;
      row.lastAppliedBy = appliedBy(status);
    }
    if (status?.result) row.result = status.result;
    const error = errors.get(name);
    if (error) row.note = error;
    else if (!planned && valid.has(name)) row.note = "drift not computed: reading the inventory across host namespaces is not allowed for you";
    return row;
  });
}
