// `vc list`: the repository's clusters joined with their live host state (a few fleet-wide LISTs and one plan per cluster).
import type { KubeObject } from "../kube/object.js";
import { CHART_APP_LABEL, LABELS } from "../translate/keys.js";
import { fromData } from "../reconciler/status.js";
import { STATUS_CONFIGMAP, STATUS_LABEL } from "../reconciler/status-store.js";
import { hasChanges } from "../plan/build.js";
import { loadDesired } from "../target/desired.js";
import { planFleet } from "../target/fleet.js";
import { KubeTarget } from "../target/kube/target.js";
import type { KubeHost } from "./host.js";
import { pathOf } from "./paths.js";
import { controlPlaneState, type ControlPlaneState } from "./cp-state.js";
import { restorePodName } from "./restore.js";

export interface ListRow {
  name: string;
  namespace: string;
  controlPlane: ControlPlaneState;
  /** `ready/desired` control-plane replicas. */
  ready: string;
  lastAppliedRevision?: string;
  result?: string;
  /** yes: the host differs from the repository; no: in sync; invalid: the folder fails validation; unknown: could not plan. */
  drift: "yes" | "no" | "invalid" | "unknown";
  note?: string;
}

const key = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

export async function listClusters(host: KubeHost, root: string, revision: string): Promise<ListRow[]> {
  const desired = await loadDesired(root, revision);
  const [statefulSets, cpPods, restorePods, statusMaps, report] = await Promise.all([
    host.list<KubeObject>(pathOf("apps/v1", "StatefulSet"), { labelSelector: LABELS.managedBy }),
    host.list<KubeObject>(pathOf("v1", "Pod"), { labelSelector: `app=${CHART_APP_LABEL},release` }),
    host.list<KubeObject>(pathOf("v1", "Pod"), { labelSelector: `app=vc-restore,${LABELS.managedBy}` }),
    host.list<KubeObject>(pathOf("v1", "ConfigMap"), { labelSelector: `${STATUS_LABEL}=true` }),
    planFleet(new KubeTarget(host.client), desired, { prune: true, allowMassPrune: true }),
  ]);
  const byKey = (items: KubeObject[]) => new Map(items.map((o) => [key(o), o]));
  const sts = byKey(statefulSets);
  const restores = byKey(restorePods);
  const statuses = byKey(statusMaps.filter((c) => c.metadata.name === STATUS_CONFIGMAP));
  const plans = new Map(report.plans.map((p) => [p.cluster, p]));
  const errors = new Map(report.errors.map((e) => [e.cluster, e.message]));
  const valid = new Map(desired.clusters.map((c) => [c.name, c]));

  return [...desired.known.keys()].sort().map((name) => {
    const ns = desired.known.get(name)!;
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
    };
    if (status?.lastAppliedRevision) row.lastAppliedRevision = status.lastAppliedRevision;
    if (status?.result) row.result = status.result;
    const error = errors.get(name);
    if (error) row.note = error;
    return row;
  });
}
