// `vc list`: the virtual clusters the host knows (vc's status records and its managed labels) with their live state,
// joined, inside a fleet repository, with the repository's clusters (drift, and those the host does not have yet).
import { refOf, type KubeObject } from "../kube/object.js";
import { groupBy } from "../util/group.js";
import { CHART_APP_LABEL, LABELS } from "../translate/keys.js";
import { appliedBy, type ClusterStatus } from "../records/status.js";
import { KubeStatusStore, readStatuses } from "../records/status-store.js";
import { hasChanges } from "../plan/build.js";
import { loadDesiredIndex, loadIndexedChunk, type DesiredIndex, type DesiredState } from "../pipeline/load.js";
import { INVENTORY_CHUNK } from "../pipeline/chunks.js";
import { planFleet } from "../pipeline/fleet.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { KubeApiError } from "../host/client.js";
import { HostError, type KubeHost } from "./host.js";
import { listVisible, NOT_VISIBLE, unlessForbidden } from "./visible.js";
import { pathOf } from "./paths.js";
import { controlPlaneState, type ControlPlaneState } from "./cp-state.js";
import { restorePodName } from "./restore.js";
import { readClusterHealth } from "../health/read.js";
import { FleetReadForbidden, readFleetHealth, type FleetHealthCluster } from "../health/fleet-read.js";
import { healthRefs } from "../health/fleet.js";
import type { ClusterHealth, HealthStatus } from "../model/health.js";
import { mapLimit } from "../util/pool.js";
import type { ClusterWave } from "../rollout/view.js";
import { commandPins } from "../rollout/command.js";
import { removeBasesDir } from "../rollout/snapshot.js";
import { dirname } from "node:path";
import { chooseOwner } from "../model/owner.js";
import { fleetLocation } from "../git/origin.js";
import type { Plan } from "../plan/types.js";

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
  /** When it was applied (ISO 8601). */
  lastAppliedTime?: string;
  /** The applied commit's subject and author, when the repository has it. */
  commit?: { subject: string; author: string; time: string };
  result?: string;
  /**
   * yes: the host differs from the repository; no: in sync; invalid: the folder fails validation; unknown: could not
   * plan; "-": not compared (no repository, or the repository has no folder for this cluster).
   */
  drift: "yes" | "no" | "invalid" | "unknown" | "-";
  /** With drift "yes": how many objects differ (to create, update or delete). */
  driftObjects?: number;
  /** The cluster's labels (its cluster.yaml), when the repository has its folder. */
  labels: Record<string, string>;
  /** Its wave in the fleet's rollout, while one holds it (rollout/view.ts). */
  wave?: ClusterWave;
  /** Where the cluster is known: the repository, the host, or both. */
  source: "repository" | "host" | "both";
  /**
   * The cluster's health on the host (src/health), and the first reason when not Healthy; outside a repository the
   * recorded one.
   */
  health: HealthStatus;
  healthReason?: string;
  note?: string;
}

/** The control planes' pods (render/statefulSet.ts controlPlanePodLabels), across namespaces. */
const CONTROL_PLANE_PODS = `app=${CHART_APP_LABEL},release`;

const key = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const toHostError = (err: unknown) => (err instanceof KubeApiError ? new HostError(err.status, "", err.message) : err);

/**
 * The clusters the host knows: vc's status records (through the status store) and control planes with vc's managed
 * label.
 */
interface HostKnown {
  clusters: Map<string, string>;
  statuses: Map<string, ClusterStatus>;
  /** What could not be listed across namespaces, said once. */
  notes: string[];
  /** The control planes listed across namespaces (vc's managed label), when the user may. */
  statefulSets?: KubeObject[];
}

async function hostKnownClusters(host: KubeHost): Promise<HostKnown> {
  const clusters = new Map<string, string>();
  const statuses = new Map<string, ClusterStatus>();
  const notes: string[] = [];
  const records = await unlessForbidden(
    new KubeStatusStore(host.client).list().catch((err: unknown) => Promise.reject(toHostError(err))),
  );
  if (records) for (const s of records) clusters.set(s.cluster, s.hostNamespace), statuses.set(s.cluster, s);
  else notes.push(`vc's records of the clusters are ${NOT_VISIBLE}`);
  const sets = await unlessForbidden(
    host.list<KubeObject>(pathOf("apps/v1", "StatefulSet"), { labelSelector: LABELS.managedBy }),
  );
  if (sets) {
    for (const s of sets) {
      const name = s.metadata.labels?.[LABELS.managedBy];
      if (name && s.metadata.name === name && !clusters.has(name)) clusters.set(name, s.metadata.namespace ?? "");
    }
  } else notes.push(`control planes across namespaces are ${NOT_VISIBLE}`);
  return { clusters, statuses, notes, ...(sets ? { statefulSets: sets } : {}) };
}

/** Rows for the host's clusters, and with `repo` for the repository's too (drift computed for those). */
export async function listClusters(
  host: KubeHost,
  repo?: { root: string; revision: string },
): Promise<{ rows: ListRow[]; notes: string[] }> {
  const known = await hostKnownClusters(host);
  // The repository in summary; its clusters are rendered a chunk at a time with the plan, never all at once.
  const index = repo ? await loadDesiredIndex(repo.root, repo.revision) : undefined;
  // A running rollout's held clusters planned at their pinned base, as vc diff plans them (rollout/command.ts); a
  // user who may not read the rollout's records gets the plan at the newest base.
  let basesDirs: string[] = [];
  if (index && repo) {
    const owner = chooseOwner(undefined, await fleetLocation(repo.root));
    const pins = await commandPins(repo.root, "kube", owner, host.client).catch(() => undefined);
    if (pins) index.state.bases = pins.bases;
    // Each pinned base is materialised at <folder>/bases/<digest>; the folder goes once the plan is made (a vc ui
    // session lists again and again).
    basesDirs = [...new Set(Object.values(pins?.bases ?? {}).map((b) => dirname(dirname(b))))];
  }
  const desired = index?.state;
  const all = new Map(known.clusters);
  for (const [name, ns] of desired?.known ?? []) all.set(name, ns);
  const namespaces = [...new Set(all.values())];
  const kind = (apiVersion: string, k: string) => (ns?: string) => pathOf(apiVersion, k, ns);
  // Each rendered cluster kept as what its health needs: the references of its objects that have health rules.
  const rendered = new Map<string, FleetHealthCluster>();
  const keep = (chunk: DesiredState) => {
    for (const c of chunk.clusters)
      rendered.set(c.name, { name: c.name, hostNamespace: c.hostNamespace, objects: healthRefs(c.objects.map(refOf)) });
  };
  const [sets, cps, restoring, planned] = await Promise.all([
    // The control planes hostKnownClusters listed across namespaces (the same LIST), else namespace by namespace.
    known.statefulSets
      ? { items: known.statefulSets, hidden: new Set<string>() }
      : listVisible<KubeObject>(host, kind("apps/v1", "StatefulSet"), namespaces, { labelSelector: LABELS.managedBy }),
    listVisible<KubeObject>(host, kind("v1", "Pod"), namespaces, { labelSelector: CONTROL_PLANE_PODS }),
    listVisible<KubeObject>(host, kind("v1", "Pod"), namespaces, {
      labelSelector: `app=vc-restore,${LABELS.managedBy}`,
    }),
    // The plan reads every cluster's inventory across namespaces: a user who may not has no drift column.
    index
      ? unlessForbidden(
          planFleet(new KubeTarget(host.client), index, { prune: true, allowMassPrune: true }, { onChunk: keep }).catch(
            (err: unknown) => Promise.reject(toHostError(err)),
          ),
        )
      : undefined,
  ]);
  // Without a plan the clusters are rendered for their health alone.
  if (index && !planned) await renderEach(index, keep);
  for (const dir of basesDirs) removeBasesDir(dir);
  // Records the fleet-wide LIST did not give (the user may not list across namespaces): one read per cluster.
  const missing = [...all]
    .filter(([name]) => !known.statuses.has(name))
    .map(([cluster, hostNamespace]) => ({ cluster, hostNamespace }));
  const more = missing.length
    ? await unlessForbidden(
        readStatuses(new KubeStatusStore(host.client), missing, { oneByOne: true }).catch((err: unknown) =>
          Promise.reject(toHostError(err)),
        ),
      )
    : undefined;
  const statuses = new Map(known.statuses);
  for (const [name, s] of more ?? []) if (s) statuses.set(name, s);
  const hidden = new Set([...sets.hidden, ...cps.hidden]);
  const sts = new Map(sets.items.map((o) => [key(o), o]));
  const restores = new Map(restoring.items.map((o) => [key(o), o]));
  // The control-plane pods by namespace and release, grouped once (a fleet's pods were filtered once per cluster).
  const podsOf = groupBy(cps.items, (p) => `${p.metadata.namespace ?? ""}/${p.metadata.labels?.release ?? ""}`);
  const report = planned ?? { plans: [], errors: desired?.errors ?? [] };
  const plans = new Map(report.plans.map((p) => [p.cluster, p]));
  const errors = new Map(report.errors.map((e) => [e.cluster, e.message]));
  const valid = rendered;

  // Health of each valid repository cluster whose namespace the user may read: one LIST per kind for them all, with
  // the StatefulSets and control-plane pods listed above; cluster by cluster (a few reads each, 8 at once) for a user
  // who may not list across namespaces.
  const healthOf = new Map<string, { status: HealthStatus; reason?: string }>();
  const readable = [...rendered.values()].filter((c) => !hidden.has(c.hostNamespace));
  const listed =
    hidden.size > 0
      ? {}
      : {
          kinds: new Map([["apps/v1/StatefulSet", sets.items]]),
          pods: [{ selector: CONTROL_PLANE_PODS, items: cps.items }],
        };
  const fleet =
    readable.length === 0
      ? new Map()
      : await readFleetHealth(host.client, readable, listed).catch((err: unknown) =>
          err instanceof FleetReadForbidden ? undefined : Promise.reject(err),
        );
  const note = (name: string, h: ClusterHealth) =>
    healthOf.set(name, { status: h.status, ...(h.reason ? { reason: h.reason } : {}) });
  if (fleet) for (const [name, h] of fleet) note(name, h);
  else
    await mapLimit(readable, 8, async (c) =>
      note(c.name, await readClusterHealth(host.client, c.hostNamespace, c.objects)),
    );

  const rows = [...all.keys()].sort().map((name) => {
    const ns = all.get(name)!;
    const inRepo = desired?.known.has(name) ?? false;
    const source: ListRow["source"] = inRepo ? (known.clusters.has(name) ? "both" : "repository") : "host";
    if (hidden.has(ns))
      return {
        name,
        namespace: ns,
        controlPlane: "unknown",
        ready: "-",
        drift: inRepo ? "unknown" : "-",
        source,
        health: "Unknown",
        labels: {},
        note: `${NOT_VISIBLE} (namespace ${ns})`,
      } satisfies ListRow;
    const status = statuses.get(name);
    const pods = podsOf.get(`${ns}/${name}`) ?? [];
    const cp = controlPlaneState(
      sts.get(`${ns}/${name}`),
      pods,
      restores.get(`${ns}/${restorePodName(name)}`),
      status?.suspendedBy,
    );
    const plan = plans.get(name);
    const drift: ListRow["drift"] = !inRepo
      ? "-"
      : !valid.has(name)
        ? "invalid"
        : plan
          ? hasChanges(plan)
            ? "yes"
            : "no"
          : "unknown";
    // Live health for a repository cluster; a host-only one shows what the reconciler last recorded.
    const health =
      healthOf.get(name) ?? (status?.health ? { status: status.health, reason: status.healthReason } : undefined);
    const row: ListRow = {
      name,
      namespace: ns,
      controlPlane: cp.state,
      ready: `${cp.ready}/${cp.desired}`,
      drift,
      ...(drift === "yes" && plan ? { driftObjects: differing(plan) } : {}),
      source,
      health: health?.status ?? "Unknown",
      labels: {},
    };
    if (health?.reason) row.healthReason = health.reason;
    if (status?.lastAppliedRevision) {
      row.lastAppliedRevision = status.lastAppliedRevision;
      row.lastAppliedBy = appliedBy(status);
      if (status.lastAppliedTime) row.lastAppliedTime = status.lastAppliedTime;
    }
    if (status?.result) row.result = status.result;
    const error = errors.get(name);
    if (error) row.note = error;
    else if (desired && !known.clusters.has(name)) row.note = "in the repository, not on the host";
    else if (desired && !inRepo) row.note = `on the host, not in this repository`;
    if (!error && desired && !planned && valid.has(name))
      row.note = "drift not computed: reading the inventory across host namespaces is not allowed for you";
    return row;
  });
  return { rows, notes: known.notes };
}

/** How many objects a plan would create, update or delete. */
export function differing(plan: Plan): number {
  return plan.changes.filter((c) => c.action !== "unchanged").length;
}

/** Renders the indexed repository a chunk at a time, handing each chunk to `keep`. */
async function renderEach(index: DesiredIndex, keep: (chunk: DesiredState) => void): Promise<void> {
  for (let i = 0; i < index.valid.length; i += INVENTORY_CHUNK) {
    keep(await loadIndexedChunk(index, index.valid.slice(i, i + INVENTORY_CHUNK)));
  }
}
