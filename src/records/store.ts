// The records store: read, write and list vc's records of (source, cluster) in the records namespace, where no tenant identity may write.
import { groupBy } from "../util/group.js";
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { labelMatcher, selectorIn } from "../kube/selector.js";
import { KubeApiError, objectPath, type KubeClient } from "../host/client.js";
import { ANNOTATIONS, FIELD_MANAGER, LABELS, recordsNamespace } from "../translate/keys.js";
import { mergeEntries, nextArchive } from "./archive.js";
import { parseHistory, type ClusterStatus, type Reconciliation } from "./status.js";
import {
  byClusterThenAge,
  fromRecordConfigMap,
  historyName,
  INVENTORY_KEY,
  inventoryText,
  HOST_NAMESPACE_LABEL,
  RECORD_LABEL,
  recordBase,
  recordLabels,
  recordName,
  statusData,
  type ClusterRecord,
} from "./record.js";

/** A record ConfigMap as a memo keeps it: its labels (for selectors) and the record read from it. */
interface Remembered {
  labels: Readonly<Record<string, string>>;
  rec: ClusterRecord;
}

/** What a RecordStore remembers within one unit of work (see RecordStore.memo). */
interface Memo {
  on: boolean;
  /** Every LIST is answered from one LIST of every record (see memoize). */
  fleet: boolean;
  listing?: Promise<Map<string, Remembered>>;
  listed?: Map<string, Remembered>;
  /** Records read by name (undefined: none there), and those this store wrote. */
  reads: Map<string, ClusterRecord | undefined>;
  /** Every source's records of the clusters a LIST named (listClusters), by cluster, until this store writes one. */
  clusters: Map<string, ClusterRecord[]>;
  /** Writes of this store in the unit of work: a LIST that a write overtook is not kept in `clusters`. */
  writes: number;
}

/** A memo that remembers nothing yet. */
function emptyMemo(on: boolean, fleet: boolean): Memo {
  return { on, fleet, reads: new Map(), clusters: new Map(), writes: 0 };
}

/** Field manager of the inventory key, apart from the status's ("vc"), so that a status write never drops the inventory. */
const INVENTORY_FIELD_MANAGER = "vc-inventory";
/** Field manager of run-time suspension, apart from the reconciler's, so that its status writes never remove it. */
const SUSPEND_FIELD_MANAGER = "vc-suspend";
/** Tries of a history write that lost a race with another writer (409) before giving up. */
const HISTORY_WRITE_TRIES = 5;

/**
 * vc's records on a live host. One ConfigMap per (source, cluster) in the records namespace holds the inventory, the
 * status and the run-time suspension; a second one its older reconciliations. Only the platform (the reconciler's
 * role, a platform user's kubeconfig) may write there: nothing in a host namespace is ever read as a record.
 */
export class RecordStore {
  constructor(
    readonly client: KubeClient,
    readonly namespace: string = recordsNamespace(),
  ) {}

  /**
   * The memo of one unit of work (a reconciler pass, a chunk of a full pass), on from memoize() to unmemoize(). A LIST
   * of every record is kept, and the reads that follow (list with any selector, read) are answered from it; a record
   * read by name before any such LIST is kept too (one GET per record). The store's own writes are put into it as the
   * server answered them; a write while the LIST is in flight drops the LIST (the next read LISTs again). Never kept
   * by time: each unit starts afresh, so a rival record created since the last unit is seen (the older claim wins).
   * A narrowed LIST (claimants, a selection) is answered from a kept LIST, else asked of the server (unless `fleet`).
   */
  private memo: Memo = emptyMemo(false, false);

  /**
   * Starts a unit of work: the memo is emptied, and the next read asks the server. `fleet`: the unit reads every record
   * anyway (a plan of the whole fleet, a full pass's start), so a narrowed LIST is answered from the one LIST of every
   * record too.
   */
  memoize(opts: { fleet?: boolean } = {}): void {
    this.memo = emptyMemo(true, !!opts.fleet);
  }

  /** Whether a unit of work is on (memoize): a step inside a command's unit keeps it. */
  get memoized(): boolean {
    return this.memo.on;
  }

  /** Ends the unit of work: every read asks the server again. */
  unmemoize(): void {
    this.memo = emptyMemo(false, false);
  }

  /** Every record ConfigMap, by name, from the memo (one LIST for the unit of work); a missing namespace holds none. */
  private remembered(): Promise<Map<string, Remembered>> {
    const memo = this.memo;
    if (memo.listing) return memo.listing;
    const listing: Promise<Map<string, Remembered>> = this.listRecords().then((items) => {
      const out = new Map<string, Remembered>();
      for (const r of items) out.set(r.name, r);
      // A write of this store while the LIST was in flight dropped it: the answer is not kept.
      if (memo.listing === listing) memo.listed = out;
      return out;
    });
    memo.listing = listing;
    listing.catch(() => {
      if (memo.listing === listing) memo.listing = undefined;
    });
    return listing;
  }

  /** Puts what a write of this store left on the server into the memo (`cm` undefined: the record is gone). */
  private noteWrite(name: string, cm: KubeObject | undefined): void {
    const memo = this.memo;
    if (!memo.on) return;
    const rec = cm ? fromRecordConfigMap(cm) : undefined;
    memo.reads.set(name, rec);
    memo.writes++;
    memo.clusters.clear();
    if (!memo.listing) return;
    if (!memo.listed) {
      // The LIST in flight may or may not hold this write: the next read LISTs again.
      memo.listing = undefined;
      return;
    }
    if (cm && rec) memo.listed.set(name, { labels: cm.metadata.labels ?? {}, rec });
    else memo.listed.delete(name);
  }

  /** The record of (source, cluster), or undefined. */
  async read(source: string, cluster: string): Promise<ClusterRecord | undefined> {
    const name = recordName(source, cluster);
    const rec = await this.readByName(name);
    return rec && rec.source === source && rec.cluster === cluster ? rec : undefined;
  }

  private async readByName(name: string): Promise<ClusterRecord | undefined> {
    const memo = this.memo;
    if (memo.on && memo.listing) return (await memo.listing).get(name)?.rec;
    if (memo.on && memo.reads.has(name)) return memo.reads.get(name);
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name });
    const rec = cm ? fromRecordConfigMap(cm) : undefined;
    if (memo.on && this.memo === memo && !memo.reads.has(name)) memo.reads.set(name, rec);
    return rec;
  }

  /**
   * The record ConfigMaps that hold each cluster (the oldest claim of each), by cluster name; `cluster` narrows the LIST
   * to one. For the commands that show a record as it is stored (vc describe, vc list, vc debug): its data holds the
   * status keys (status.ts fromData) and its annotations the run-time suspension.
   */
  async holderConfigMaps(cluster?: string): Promise<Map<string, KubeObject>> {
    let items: KubeObject[];
    try {
      items = await this.client.list(resourceFor("v1", "ConfigMap")!, {
        namespace: this.namespace,
        labelSelector: `${RECORD_LABEL}=record${cluster ? `,${LABELS.managedBy}=${cluster}` : ""}`,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return new Map();
      throw err;
    }
    const pairs = items
      .map((cm) => ({ cm, rec: fromRecordConfigMap(cm) }))
      .filter((p): p is { cm: KubeObject; rec: ClusterRecord } => p.rec !== undefined);
    pairs.sort((a, b) => byClusterThenAge(a.rec, b.rec));
    const out = new Map<string, KubeObject>();
    for (const p of pairs) if (!out.has(p.rec.cluster)) out.set(p.rec.cluster, p.cm);
    return out;
  }

  /**
   * The records of every source claiming one of the clusters or host namespaces (two small LISTs, selecting up to
   * MAX_SELECTED_VALUES of each), older claim first.
   */
  async claimants(claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>): Promise<ClusterRecord[]> {
    // The clusters' records come from the unit of work's LIST naming them when it made one (a chunk's listClusters).
    const known =
      this.memo.on && claims.every((c) => this.memo.clusters.has(c.cluster)) ? this.memo.clusters : undefined;
    const [byCluster, byNamespace] = await Promise.all([
      known
        ? [...new Set(claims.map((c) => c.cluster))].flatMap((c) => known.get(c)!)
        : this.list(
            selectorIn(
              LABELS.managedBy,
              claims.map((c) => c.cluster),
            ),
          ),
      this.list(
        selectorIn(
          HOST_NAMESPACE_LABEL,
          claims.map((c) => c.hostNamespace),
        ),
      ),
    ]);
    const seen = new Set<string>();
    return [...byCluster, ...byNamespace]
      .filter((r) => !seen.has(`${r.source}\n${r.cluster}`) && !!seen.add(`${r.source}\n${r.cluster}`))
      .sort(byClusterThenAge);
  }

  /** Every record of every source (one LIST; `selector` narrows it), sorted by cluster, older claim first. A missing namespace holds none. */
  async list(selector?: string): Promise<ClusterRecord[]> {
    if (this.memo.on && (selector === undefined || this.memo.fleet || this.memo.listing)) {
      const matches = labelMatcher(selector);
      return [...(await this.remembered()).values()]
        .filter((r) => matches(r.labels))
        .map((r) => r.rec)
        .sort(byClusterThenAge);
    }
    return (await this.listRecords(selector)).map((r) => r.rec).sort(byClusterThenAge);
  }

  /**
   * The records of the named clusters (one LIST selecting them, kube/selector.ts selectorIn), every source's, sorted as
   * list() sorts. While a memo is on, the record of (source, cluster) of each named cluster is kept, found or not: the
   * reads of those records that follow (a chunk's apply, its status writes) ask the server nothing.
   */
  async listClusters(clusters: readonly string[], source: string | undefined): Promise<ClusterRecord[]> {
    const names = [...new Set(clusters)];
    // Named by a LIST of this unit of work already, and nothing written since: from the memo.
    if (this.memo.on && names.every((c) => this.memo.clusters.has(c)))
      return names.flatMap((c) => this.memo.clusters.get(c)!).sort(byClusterThenAge);
    const before = this.memo;
    const writes = before.writes;
    const listed = await this.list(selectorIn(LABELS.managedBy, names));
    const memo = this.memo;
    if (memo.on && memo === before && memo.writes === writes) {
      const byCluster = groupBy(listed, (r) => r.cluster);
      for (const c of names) memo.clusters.set(c, byCluster.get(c) ?? []);
    }
    if (source !== undefined && memo.on && !memo.listing) {
      const found = new Map(listed.filter((r) => r.source === source).map((r) => [r.cluster, r]));
      for (const c of names) {
        const name = recordName(source, c);
        if (!memo.reads.has(name)) memo.reads.set(name, found.get(c));
      }
    }
    return listed;
  }

  /**
   * The records (one LIST; `selector` narrows it), each read from its ConfigMap as its page arrives (listMapped): a
   * fleet's record ConfigMaps are never all parsed at once. A missing namespace holds none.
   */
  private async listRecords(selector?: string): Promise<Array<Remembered & { name: string }>> {
    try {
      return await this.client.listMapped(
        resourceFor("v1", "ConfigMap")!,
        { namespace: this.namespace, labelSelector: `${RECORD_LABEL}=record${selector ? `,${selector}` : ""}` },
        (cm) => {
          const rec = fromRecordConfigMap(cm);
          return rec && { name: cm.metadata.name, labels: cm.metadata.labels ?? {}, rec };
        },
      );
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return [];
      throw err;
    }
  }

  /** Writes the status part of a record (field manager "vc"); reconciliations the status pushed out go to its history first. */
  async writeStatus(source: string, status: ClusterStatus, depth: number): Promise<void> {
    if (status.spilled?.length && depth > 0) await this.archive(source, status.cluster, status.spilled, depth);
    const cm = recordBase(this.namespace, source, status.cluster, status.hostNamespace);
    cm.data = { ...(cm.data as Record<string, string>), ...statusData(status) };
    await this.applyCreatingNamespace(cm, FIELD_MANAGER);
  }

  /** Writes the inventory part of a record: the keys (objectKey) of the host objects vc applied for the cluster. */
  async writeInventory(source: string, cluster: string, hostNamespace: string, keys: Iterable<string>): Promise<void> {
    const cm = recordBase(this.namespace, source, cluster, hostNamespace);
    (cm.data as Record<string, string>)[INVENTORY_KEY] = inventoryText(keys);
    await this.applyCreatingNamespace(cm, INVENTORY_FIELD_MANAGER);
  }

  /** Suspends (reason) or resumes (undefined) a cluster's reconciliation at run time: an annotation of its own field manager. */
  async setSuspension(
    source: string,
    cluster: string,
    hostNamespace: string,
    reason: string | undefined,
  ): Promise<void> {
    const cm = recordBase(this.namespace, source, cluster, hostNamespace);
    if (reason !== undefined) cm.metadata.annotations = { [ANNOTATIONS.suspendedBy]: reason };
    else if (!(await this.read(source, cluster))) return; // nothing recorded: nothing suspended
    await this.applyCreatingNamespace(cm, SUSPEND_FIELD_MANAGER);
  }

  /** The older reconciliations kept of (source, cluster), newest first, merged with the status's own. */
  async history(source: string, status: ClusterStatus): Promise<Reconciliation[]> {
    return mergeEntries(status.history, await this.archived(source, status.cluster));
  }

  /** Deletes a record and its history outright (a hand-over to another source: vc adopt --from). */
  async forget(source: string, cluster: string): Promise<void> {
    await this.client.delete({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: this.namespace,
      name: recordName(source, cluster),
    });
    this.noteWrite(recordName(source, cluster), undefined);
    await this.client.delete({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: this.namespace,
      name: historyName(source, cluster),
    });
  }

  /**
   * Forgets a cluster (its folder removed and its objects pruned): its status and history. While its record still
   * holds objects (a kept Namespace), the record stays with them, so that the namespace stays claimed.
   */
  async remove(source: string, cluster: string): Promise<void> {
    const rec = await this.read(source, cluster);
    if (rec && rec.inventory.length > 0) {
      // The status's field manager applies the identity alone: the status keys it owned are dropped.
      this.noteWrite(
        recordName(source, cluster),
        await this.client.apply(recordBase(this.namespace, source, cluster, rec.hostNamespace), {
          fieldManager: FIELD_MANAGER,
        }),
      );
      await this.client.delete({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: this.namespace,
        name: historyName(source, cluster),
      });
      return;
    }
    await this.client.delete({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: this.namespace,
      name: recordName(source, cluster),
    });
    this.noteWrite(recordName(source, cluster), undefined);
    await this.client.delete({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: this.namespace,
      name: historyName(source, cluster),
    });
  }

  /**
   * Adds entries to a record's history: read, merge, write with the resourceVersion read (created when absent), so
   * that two writers (the reconciler and a vc apply) never drop each other's entries: a lost race reads again.
   */
  async archive(source: string, cluster: string, spilled: readonly Reconciliation[], depth: number): Promise<void> {
    const name = historyName(source, cluster);
    const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name };
    for (let attempt = 1; ; attempt++) {
      const live = await this.client.get(ref);
      const cm: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: this.namespace, labels: recordLabels(source, cluster, "history") },
        data: { source, cluster, history: JSON.stringify(nextArchive(this.entriesOf(live), spilled, depth)) },
      };
      try {
        if (live) {
          cm.metadata.resourceVersion = live.metadata.resourceVersion;
          await this.client.request("PATCH", objectPath(cm), {
            query: { fieldManager: FIELD_MANAGER, force: true },
            body: cm,
            contentType: "application/apply-patch+yaml",
          });
        } else {
          await this.ensureNamespace();
          await this.client.request("POST", `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`, {
            query: { fieldManager: FIELD_MANAGER },
            body: cm,
          });
        }
        return;
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 409 && attempt < HISTORY_WRITE_TRIES) continue;
        throw err;
      }
    }
  }

  private async archived(source: string, cluster: string): Promise<Reconciliation[]> {
    return this.entriesOf(
      await this.client.get({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: this.namespace,
        name: historyName(source, cluster),
      }),
    );
  }

  private entriesOf(cm: KubeObject | undefined): Reconciliation[] {
    if (cm?.metadata.labels?.[RECORD_LABEL] !== "history") return [];
    return parseHistory((cm.data as Record<string, string> | undefined)?.history).entries;
  }

  /** Server-side apply under `fieldManager`; the records namespace is created when it does not exist yet. */
  private async applyCreatingNamespace(cm: KubeObject, fieldManager: string): Promise<void> {
    let applied: KubeObject;
    try {
      applied = await this.client.apply(cm, { fieldManager });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      await this.ensureNamespace();
      applied = await this.client.apply(cm, { fieldManager });
    }
    this.noteWrite(cm.metadata.name, applied);
  }

  /** The records namespace being created, shared by the writes that found it missing at once (a first run's chunk). */
  private ensuring?: Promise<void>;

  /** Creates the records namespace unless it exists: once for every write waiting on it, again if it is gone later. */
  private ensureNamespace(): Promise<void> {
    this.ensuring ??= (async () => {
      if (await this.client.get({ apiVersion: "v1", kind: "Namespace", name: this.namespace })) return;
      await this.client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: this.namespace } });
    })().finally(() => (this.ensuring = undefined));
    return this.ensuring;
  }
}
