// Where cluster status lives on a live host: vc's record of the cluster in the records namespace (records/store.ts; dir
// target: dir-status-store.ts).
import { ANNOTATIONS, LABELS } from "../translate/keys.js";
import { KubeApiError, type KubeClient } from "../host/client.js";
import { mapLimit } from "../util/pool.js";
import { RecordStore } from "./store.js";
import { archiveDepth, DEFAULT_HISTORY_LIMIT } from "./archive.js";
import type { ApplyLease } from "./lease.js";
import type { ClusterStatus, Reconciliation } from "./status.js";

/**
 * Annotation on a cluster's record: while present, the reconciler skips the cluster; its value says who and why
 * (suspend.ts).
 */
export const SUSPENDED_BY_ANNOTATION = ANNOTATIONS.suspendedBy;

/**
 * Name of the status ConfigMap vc kept in each cluster's host namespace before records (migrated from:
 * sinks/kube/migrate.ts).
 */
export const STATUS_CONFIGMAP = "vc-status";
/** Label marking the status ConfigMap (value "true"); see LABELS.status. */
export const STATUS_LABEL = LABELS.status;
/** Folder of the status files inside a dir: target. */
export const STATUS_DIR = ".vc-status";
/** Name of the ConfigMap beside the legacy `vc-status` that kept a cluster's older reconciliations (migrated from). */
export const HISTORY_CONFIGMAP = "vc-history";
/** Folder of the older reconciliations inside a dir: target's status folder. */
export const HISTORY_DIR = "history";

export interface WriteStatusOptions {
  /**
   * Write a status for a cluster that has no record yet (default true: the reconciler's status of a cluster that never
   * applied says why). False: such a status is not written, and write() answers false.
   */
  createNamespace?: boolean;
}

/**
 * Folds a run into a cluster's status: `prev` is the status as stored when the write is made (read again after a lost
 * race: the fold may be called more than once), `seen.gone` the lease of a run that never finished on the cluster (an
 * interrupted run, whose writes may have landed). Returns the status to store, or undefined to store nothing.
 */
export type StatusFold = (prev: ClusterStatus | undefined, seen: { gone?: ApplyLease }) => ClusterStatus | undefined;

export interface StatusStoreOptions {
  /**
   * Reconciliations kept per cluster, the status's own included (default DEFAULT_HISTORY_LIMIT); always within
   * HISTORY_BYTES.
   */
  historyLimit?: number;
}

export interface StatusStore {
  read(cluster: string, hostNamespace: string): Promise<ClusterStatus | undefined>;
  /** Every cluster's status, sorted by cluster name. */
  list(): Promise<ClusterStatus[]>;
  /**
   * Writes the status as given (a test, a hand-over); `suspendedBy` is never written (it belongs to whoever suspended
   * the cluster). Reconciliations the status pushed out (`spilled`) are added to the cluster's longer history first.
   */
  write(status: ClusterStatus, opts?: WriteStatusOptions): Promise<boolean>;
  /**
   * Folds a run into the stored status by compare-and-swap (StatusFold): a writer that raced this one is read and
   * folded over, never overwritten, so no reconciliation is lost. Returns the status stored, or undefined when the fold
   * stored nothing (or, with createNamespace false, the cluster has no record yet).
   */
  update(
    cluster: string,
    hostNamespace: string,
    fold: StatusFold,
    opts?: WriteStatusOptions,
  ): Promise<ClusterStatus | undefined>;
  /** Forgets a cluster whose folder was removed and whose objects were pruned (its status and its longer history). */
  remove(cluster: string, hostNamespace: string): Promise<void>;
  /**
   * Every reconciliation kept of a cluster, newest first: the status's own and the older ones (none stored: the
   * status's).
   */
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
      for (const c of clusters)
        out.set(
          c.cluster,
          byCluster.get(c.cluster)?.hostNamespace === c.hostNamespace ? byCluster.get(c.cluster) : undefined,
        );
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

/**
 * The status of each cluster on a live host, kept in vc's record of (source, cluster) in the records namespace
 * (records/store.ts), never in the host namespace a tenant may write. Without a source (a platform user's `vc status`)
 * it reads the record that holds each cluster (the oldest claim).
 */
export class KubeStatusStore implements StatusStore {
  private readonly depth: number;
  readonly records: RecordStore;
  constructor(
    readonly client: KubeClient,
    opts: StatusStoreOptions & { source?: string; records?: RecordStore } = {},
  ) {
    this.depth = archiveDepth(opts.historyLimit ?? DEFAULT_HISTORY_LIMIT);
    this.records = opts.records ?? new RecordStore(client);
    this.source = opts.source;
  }
  private readonly source: string | undefined;

  async read(cluster: string, _hostNamespace: string): Promise<ClusterStatus | undefined> {
    if (this.source !== undefined) return (await this.records.read(this.source, cluster))?.status;
    return (await this.list()).find((s) => s.cluster === cluster);
  }

  async list(): Promise<ClusterStatus[]> {
    const seen = new Set<string>();
    const out: ClusterStatus[] = [];
    // Sorted by cluster, the older claim first: the holder's status is the cluster's.
    for (const r of await this.records.list()) {
      if (!r.status || (this.source !== undefined && r.source !== this.source) || seen.has(r.cluster)) continue;
      seen.add(r.cluster);
      out.push(r.status);
    }
    return out;
  }

  async write(status: ClusterStatus, opts: WriteStatusOptions = {}): Promise<boolean> {
    return (await this.update(status.cluster, status.hostNamespace, () => status, opts)) !== undefined;
  }

  /** One compare-and-swap of the record's status part (after the history's GET and write when entries spilled). */
  async update(
    cluster: string,
    hostNamespace: string,
    fold: StatusFold,
    opts: WriteStatusOptions = {},
  ): Promise<ClusterStatus | undefined> {
    const source = this.source ?? "";
    // Only where the cluster is live: a cluster with no record yet gets none for a run that applied nothing.
    return this.records.updateStatus(source, cluster, hostNamespace, fold, this.depth, {
      create: opts.createNamespace !== false,
    });
  }

  async remove(cluster: string, _hostNamespace: string): Promise<void> {
    await this.records.remove(this.source ?? "", cluster);
  }

  async history(status: ClusterStatus): Promise<Reconciliation[]> {
    return this.records.history(this.source ?? status.owner ?? "", status);
  }
}
