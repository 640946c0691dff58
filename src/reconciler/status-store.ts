// Where cluster status lives on a live host: a ConfigMap `vc-status` in the host namespace, older history in `vc-history` (dir target: dir-status-store.ts).
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { ANNOTATIONS, FIELD_MANAGER, LABELS } from "../translate/keys.js";
import { KubeApiError, objectPath, type KubeClient } from "../target/kube/client.js";
import { mapLimit } from "../target/pool.js";
import { archiveDepth, DEFAULT_HISTORY_LIMIT, mergeEntries, nextArchive } from "./archive.js";
import { fromData, parseHistory, toData, type ClusterStatus, type Reconciliation } from "./status.js";

/** Annotation on the `vc-status` ConfigMap: while present, the reconciler skips the cluster; its value says who and why (suspend.ts). */
export const SUSPENDED_BY_ANNOTATION = ANNOTATIONS.suspendedBy;

/** Name of the status ConfigMap in each cluster's host namespace. */
export const STATUS_CONFIGMAP = "vc-status";
/** Label marking the status ConfigMap (value "true"); see LABELS.status. */
export const STATUS_LABEL = LABELS.status;
/** Folder of the status files inside a dir: target. */
export const STATUS_DIR = ".vc-status";
/**
 * Name of the ConfigMap beside `vc-status` that keeps a cluster's older reconciliations (archive.ts): the status holds
 * the newest 10, so the statuses every pass and `vc list` read stay small. It carries no status label (LISTs of
 * statuses never fetch it) and no inventory label (prune never sees it).
 */
export const HISTORY_CONFIGMAP = "vc-history";
/** Folder of the older reconciliations inside a dir: target's status folder. */
export const HISTORY_DIR = "history";

export interface WriteStatusOptions {
  /**
   * Create the host namespace when it does not exist (default true: the reconciler's status of a cluster that never
   * applied says why). False: such a status is not written, and write() answers false.
   */
  createNamespace?: boolean;
}

export interface StatusStoreOptions {
  /** Reconciliations kept per cluster, the status's own included (default DEFAULT_HISTORY_LIMIT); always within HISTORY_BYTES. */
  historyLimit?: number;
}

export interface StatusStore {
  read(cluster: string, hostNamespace: string): Promise<ClusterStatus | undefined>;
  /** Every cluster's status, sorted by cluster name. */
  list(): Promise<ClusterStatus[]>;
  /**
   * Writes the status; `suspendedBy` is never written (it belongs to whoever suspended the cluster). Reconciliations
   * the status pushed out (`spilled`) are added to the cluster's longer history first, so none is lost between the two.
   */
  write(status: ClusterStatus, opts?: WriteStatusOptions): Promise<boolean>;
  /** Forgets a cluster whose folder was removed and whose objects were pruned (its status and its longer history). */
  remove(cluster: string, hostNamespace: string): Promise<void>;
  /** Every reconciliation kept of a cluster, newest first: the status's own and the older ones (none stored: the status's). */
  history(status: ClusterStatus): Promise<Reconciliation[]>;
}

/**
 * The statuses of these clusters, each only in its host namespace (as the reconciler reads it): every status in one
 * LIST when there are several and `oneByOne` is not asked for (a run limited to named clusters), falling back to one
 * read per cluster when the caller may not list ConfigMaps across namespaces.
 */
export async function readStatuses(
  store: StatusStore,
  clusters: readonly { cluster: string; hostNamespace: string }[],
  opts: { oneByOne?: boolean } = {},
): Promise<Map<string, ClusterStatus | undefined>> {
  const out = new Map<string, ClusterStatus | undefined>();
  if (!opts.oneByOne && clusters.length > 1) {
    try {
      const byCluster = new Map((await store.list()).map((s) => [s.cluster, s]));
      for (const c of clusters) out.set(c.cluster, byCluster.get(c.cluster)?.hostNamespace === c.hostNamespace ? byCluster.get(c.cluster) : undefined);
      return out;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 403)) throw err;
    }
  }
  await mapLimit(clusters, 8, async (c) => out.set(c.cluster, await store.read(c.cluster, c.hostNamespace)));
  return out;
}

/** The status as its ConfigMap or file holds it: no run-time suspension, nothing spilled. */
export function stored(status: ClusterStatus): ClusterStatus {
  const { suspendedBy: _s, spilled: _p, ...rest } = status;
  return rest;
}

function fromConfigMap(cm: KubeObject, cluster: string, hostNamespace: string): ClusterStatus | undefined {
  const s = fromData((cm.data as Record<string, string> | undefined) ?? {}, cluster, hostNamespace);
  if (s) {
    s.cluster = cluster;
    s.hostNamespace = hostNamespace;
  }
  const by = cm.metadata.annotations?.[SUSPENDED_BY_ANNOTATION];
  if (s && by) s.suspendedBy = by;
  // Whose it is: the ConfigMap's own label, as for the cluster.
  const owner = cm.metadata.labels?.[LABELS.owner];
  if (s) {
    if (owner) s.owner = owner;
    else delete s.owner;
  }
  return s;
}

/** The status ConfigMap of a cluster as vc writes it. */
export function statusConfigMap(status: ClusterStatus): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: STATUS_CONFIGMAP,
      namespace: status.hostNamespace,
      labels: { [LABELS.managedBy]: status.cluster, [STATUS_LABEL]: "true", ...(status.owner ? { [LABELS.owner]: status.owner } : {}) },
    },
    data: toData(status),
  };
}

/** The ConfigMap holding a cluster's older reconciliations. */
export function historyConfigMap(cluster: string, hostNamespace: string, entries: readonly Reconciliation[], owner?: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: HISTORY_CONFIGMAP, namespace: hostNamespace, labels: { [LABELS.managedBy]: cluster, ...(owner ? { [LABELS.owner]: owner } : {}) } },
    data: { cluster, history: JSON.stringify(entries) },
  };
}

/** Tries of a history write that lost a race with another writer (409) before giving up. */
const HISTORY_WRITE_TRIES = 5;

export class KubeStatusStore implements StatusStore {
  private readonly depth: number;
  constructor(
    private readonly client: KubeClient,
    opts: StatusStoreOptions = {},
  ) {
    this.depth = archiveDepth(opts.historyLimit ?? DEFAULT_HISTORY_LIMIT);
  }

  async read(cluster: string, hostNamespace: string): Promise<ClusterStatus | undefined> {
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: hostNamespace, name: STATUS_CONFIGMAP });
    if (!cm || cm.metadata.labels?.[LABELS.managedBy] !== cluster) return undefined;
    return fromConfigMap(cm, cluster, hostNamespace);
  }

  async list(): Promise<ClusterStatus[]> {
    const items = await this.client.list(resourceFor("v1", "ConfigMap")!, { labelSelector: `${STATUS_LABEL}=true` });
    return items
      .filter((cm) => cm.metadata.name === STATUS_CONFIGMAP)
      .map((cm) => fromConfigMap(cm, cm.metadata.labels?.[LABELS.managedBy] ?? "", cm.metadata.namespace ?? ""))
      // Whose status and where are the ConfigMap's own label and namespace, never what its data claims.
      .filter((s): s is ClusterStatus => s !== undefined && s.cluster !== "")
      .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  }

  /** One server-side apply (after the history's GET and write when entries spilled); a missing host namespace is created first. */
  async write(status: ClusterStatus, opts: WriteStatusOptions = {}): Promise<boolean> {
    if (status.spilled?.length && this.depth > 0) await this.archive(status, status.spilled);
    const cm = statusConfigMap(stored(status));
    try {
      await this.client.apply(cm);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      if (opts.createNamespace === false) return false;
      await this.client.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: status.hostNamespace, labels: { [LABELS.managedBy]: status.cluster } },
      });
      await this.client.apply(cm);
    }
    return true;
  }

  async remove(_cluster: string, hostNamespace: string): Promise<void> {
    await this.client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: hostNamespace, name: STATUS_CONFIGMAP });
    await this.client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: hostNamespace, name: HISTORY_CONFIGMAP });
  }

  async history(status: ClusterStatus): Promise<Reconciliation[]> {
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: status.hostNamespace, name: HISTORY_CONFIGMAP });
    return mergeEntries(status.history, this.archived(cm, status.cluster));
  }

  /** The entries of a history ConfigMap, when it is this cluster's (its own label says so, never its data). */
  private archived(cm: KubeObject | undefined, cluster: string): Reconciliation[] {
    if (!cm || cm.metadata.labels?.[LABELS.managedBy] !== cluster) return [];
    return parseHistory((cm.data as Record<string, string> | undefined)?.history).entries;
  }

  /**
   * Adds entries to the history ConfigMap: read, merge, write with the resourceVersion read (created when absent), so
   * that two writers (the reconciler and a vc apply) never drop each other's entries: a lost race reads again.
   */
  private async archive(status: ClusterStatus, spilled: readonly Reconciliation[]): Promise<void> {
    const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: status.hostNamespace, name: HISTORY_CONFIGMAP };
    for (let attempt = 1; ; attempt++) {
      const live = await this.client.get(ref);
      const cm = historyConfigMap(status.cluster, status.hostNamespace, nextArchive(this.archived(live, status.cluster), spilled, this.depth), status.owner);
      try {
        if (live) {
          cm.metadata.resourceVersion = live.metadata.resourceVersion;
          await this.client.request("PATCH", objectPath(cm), { query: { fieldManager: FIELD_MANAGER, force: true }, body: cm, contentType: "application/apply-patch+yaml" });
        } else {
          await this.client.request("POST", `/api/v1/namespaces/${encodeURIComponent(status.hostNamespace)}/configmaps`, { query: { fieldManager: FIELD_MANAGER }, body: cm });
        }
        return;
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 409 && attempt < HISTORY_WRITE_TRIES) continue;
        throw err;
      }
    }
  }
}
