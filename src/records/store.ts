// The records store: read, write and list vc's records of (source, cluster) in the records namespace, where no tenant
// identity may write.
import { groupBy } from "../util/group.js";
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { labelMatcher, selectorIn } from "../kube/selector.js";
import { KubeApiError, objectPath, type KubeClient } from "../host/client.js";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { ANNOTATIONS, FIELD_MANAGER, LABELS, recordsNamespace } from "../translate/keys.js";
import { sleep } from "../util/retry.js";
import {
  APPLY_LEASE_RENEW_DEADLINE_MS,
  APPLY_LEASE_RENEW_MS,
  APPLY_LEASE_SECONDS,
  APPLYING_ANNOTATION,
  describeLease,
  leaseText,
  type ApplyLease,
} from "./lease.js";
import { mergeEntries, nextArchive } from "./archive.js";
import { PlatformNamespaceGuard } from "./platform-namespace.js";
import { parseHistory, STATUS_KEYS, type ClusterStatus, type Reconciliation } from "./status.js";
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

/** A change of a record: data keys and annotations set (a string) or removed (null). */
interface RecordChange {
  data?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

/** The outcome of RecordStore.claim. */
export type Claim =
  | { state: "claimed"; waited?: boolean; over?: ApplyLease }
  | { state: "stale" }
  | { state: "busy"; lease: ApplyLease };

/** A lease this run holds: its record, when it was last renewed, and, once another run took it over, that run's. */
interface HeldLease {
  source: string;
  cluster: string;
  hostNamespace: string;
  run: { via: string; revision?: string };
  renewedAt: number;
  lost?: ApplyLease;
  /** The lease of a run that never ended, taken over by this claim: the status written next says so. */
  over?: ApplyLease;
}

/** Marks a lease found given up (not another run's) when renewed. */
const LEASE_GIVEN_UP: ApplyLease = {
  holder: "",
  host: "",
  pid: 0,
  via: "nobody (the lease was removed)",
  renewTime: "",
  durationSeconds: APPLY_LEASE_SECONDS,
};

/** Tries of a compare-and-swap of a record (or its history) that lost races (409) before giving up. */
const CAS_TRIES = 20;
/** How far two machines' clocks may differ when a lease's renewal time is judged by this machine's clock. */
const MAX_CLOCK_SKEW_MS = 60_000;

/** A run lost a cluster's apply lease to another run: it writes nothing more of the cluster, its status included. */
class LeaseLostError extends Error {
  constructor(
    readonly cluster: string,
    readonly to: ApplyLease | undefined,
  ) {
    super(
      `cluster ${cluster}: this run lost its apply lease${to?.holder ? ` to ${describeLease(to)}` : ""}: it writes ` +
        `nothing more of the cluster, its status included`,
    );
  }
}

/** The data keys set to null: a status write removes the status keys its new status lacks (`all`: every one). */
function removed(current: ClusterRecord | undefined, all = false): Record<string, null> {
  const out: Record<string, null> = {};
  if (!current?.status && !all) return out;
  for (const k of STATUS_KEYS) if (k !== "cluster" && k !== "hostNamespace") out[k] = null;
  return out;
}

/** The entries of a change that set something (a new ConfigMap has nothing to remove). */
function present(values: Record<string, string | null> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values ?? {})) if (v !== null) out[k] = v;
  return out;
}

/** Whether a process of this machine runs (signal 0: EPERM means it runs under another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * vc's records on a live host. One ConfigMap per (source, cluster) in the records namespace holds the inventory, the
 * status and the run-time suspension; a second one its older reconciliations. Only the platform (the reconciler's
 * role, a platform user's kubeconfig) may write there: nothing in a host namespace is ever read as a record.
 */
export class RecordStore {
  /** The records namespace, verified a platform namespace before the first read or write (platform-namespace.ts). */
  readonly guard: PlatformNamespaceGuard;

  constructor(
    readonly client: KubeClient,
    readonly namespace: string = recordsNamespace(),
  ) {
    this.guard = new PlatformNamespaceGuard(client, namespace, "records");
  }

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

  /**
   * Puts what a write of this store left on the server into the memo (`cm` undefined: the record is gone). `wrote`
   * false: a fresh read, not a write of this store. `unknown`: the next read of the record asks the server.
   */
  private noteWrite(name: string, cm: KubeObject | undefined, wrote = true, unknown = false): void {
    const memo = this.memo;
    if (!memo.on) return;
    const rec = cm ? fromRecordConfigMap(cm) : undefined;
    if (unknown) memo.reads.delete(name);
    else memo.reads.set(name, rec);
    if (wrote) memo.writes++;
    memo.clusters.clear();
    if (!memo.listing) return;
    if (!memo.listed || unknown) {
      // The LIST in flight may or may not hold this write: the next read LISTs again.
      memo.listing = undefined;
      memo.listed = undefined;
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
    if (!(await this.guard.readable())) return undefined;
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name });
    const rec = cm ? fromRecordConfigMap(cm) : undefined;
    if (memo.on && this.memo === memo && !memo.reads.has(name)) memo.reads.set(name, rec);
    return rec;
  }

  /**
   * The record ConfigMaps that hold each cluster (the oldest claim of each), by cluster name; `cluster` narrows the
   * LIST to one. For the commands that show a record as it is stored (vc describe, vc list, vc debug): its data holds
   * the status keys (status.ts fromData) and its annotations the run-time suspension.
   */
  async holderConfigMaps(cluster?: string): Promise<Map<string, KubeObject>> {
    let items: KubeObject[];
    if (!(await this.guard.readable())) return new Map();
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

  /**
   * Every record of every source (one LIST; `selector` narrows it), sorted by cluster, older claim first. A missing
   * namespace holds none.
   */
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
    if (!(await this.guard.readable())) return [];
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

  /**
   * Writes a record by compare-and-swap: `decide` sees the record as last read (the memo's, then the server's after a
   * lost race) and says what to change; the change is a merge patch carrying the resourceVersion read (a POST when
   * there is no record yet), so a write of another run in between is a 409, read again and decided again, never
   * overwritten. Returns the record as written (or as read when `decide` changed nothing).
   */
  private async swap(
    source: string,
    cluster: string,
    hostNamespace: string,
    decide: (current: ClusterRecord | undefined) => Promise<RecordChange | undefined> | RecordChange | undefined,
  ): Promise<ClusterRecord | undefined> {
    const name = recordName(source, cluster);
    for (let attempt = 1; ; attempt++) {
      const read = attempt === 1 ? await this.readByName(name) : await this.fetch(name);
      const current = read && read.source === source && read.cluster === cluster ? read : undefined;
      const change = await decide(current);
      if (!change) return current;
      try {
        const cm = current?.resourceVersion
          ? await this.patchRecord(
              name,
              current.resourceVersion,
              recordBase(this.namespace, source, cluster, hostNamespace || current.hostNamespace),
              change,
            )
          : await this.createRecord(recordBase(this.namespace, source, cluster, hostNamespace), change);
        this.noteWrite(name, cm);
        return fromRecordConfigMap(cm);
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 409) || attempt >= CAS_TRIES) throw err;
        await sleep(Math.floor(Math.random() * 50 * attempt));
      }
    }
  }

  /** The record ConfigMap as the server has it now (one GET), put into the memo. */
  private async fetch(name: string): Promise<ClusterRecord | undefined> {
    if (!(await this.guard.readable())) return undefined;
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name });
    this.noteWrite(name, cm, false);
    return cm ? fromRecordConfigMap(cm) : undefined;
  }

  /** A merge patch of the record's identity (labels, keys) and `change`, on the resourceVersion it was decided on. */
  private patchRecord(
    name: string,
    resourceVersion: string,
    base: KubeObject,
    change: RecordChange,
  ): Promise<KubeObject> {
    const body = {
      metadata: {
        resourceVersion,
        labels: base.metadata.labels,
        ...(change.annotations ? { annotations: change.annotations } : {}),
      },
      data: { ...(base.data as Record<string, string>), ...change.data },
    };
    return this.client.request<KubeObject>("PATCH", objectPath({ ...base, metadata: { ...base.metadata, name } }), {
      body,
      contentType: "application/merge-patch+json",
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /** Creates a record (its namespace, marked, too when missing); one created meanwhile by another run is a 409. */
  private async createRecord(base: KubeObject, change: RecordChange): Promise<KubeObject> {
    const cm: KubeObject = {
      ...base,
      metadata: { ...base.metadata, annotations: present(change.annotations) },
      data: { ...(base.data as Record<string, string>), ...present(change.data) },
    };
    if (Object.keys(cm.metadata.annotations!).length === 0) delete cm.metadata.annotations;
    const post = () =>
      this.client.request<KubeObject>("POST", `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`, {
        body: cm,
        query: { fieldManager: FIELD_MANAGER },
      });
    await this.guard.ensure();
    try {
      return await post();
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      this.guard.forget();
      await this.guard.ensure();
      return post();
    }
  }

  /**
   * Folds a run into the status part of a record, by compare-and-swap: `fold` gets the status as stored now (its
   * apply lease with it) and returns the status to store, or undefined to write nothing; after a lost race it is asked
   * again with what the other writer stored, so no reconciliation is ever dropped. Reconciliations the status pushed
   * out go to its history first (a repeat is stored once). The write gives up this run's apply lease on the cluster,
   * and clears a lease whose run is gone (an interrupted run, now recorded over). A run that held the cluster's lease
   * and lost it to another run writes nothing (LeaseLostError). `create: false`: no record yet, nothing written.
   */
  async updateStatus(
    source: string,
    cluster: string,
    hostNamespace: string,
    fold: (prev: ClusterStatus | undefined, seen: { gone?: ApplyLease }) => ClusterStatus | undefined,
    depth: number,
    opts: { create?: boolean } = {},
  ): Promise<ClusterStatus | undefined> {
    const name = recordName(source, cluster);
    let written: ClusterStatus | undefined;
    await this.swap(source, cluster, hostNamespace, async (current) => {
      written = undefined;
      if (!current && opts.create === false) return undefined;
      const lease = current?.applying;
      const mine = lease?.holder === this.runId;
      const held = this.held.get(name);
      if (held && !mine) throw new LeaseLostError(cluster, lease);
      const gone = lease && !mine && this.isGone(name, lease) ? lease : held?.over;
      const prev = current?.status;
      const next = fold(prev, gone ? { gone } : {});
      if (!next) return mine || gone ? { annotations: { [APPLYING_ANNOTATION]: null } } : undefined;
      if (next.spilled?.length && depth > 0) await this.archive(source, cluster, next.spilled, depth);
      written = next;
      return {
        data: { ...removed(current), ...statusData(next) },
        ...(mine || gone ? { annotations: { [APPLYING_ANNOTATION]: null } } : {}),
      };
    });
    this.forgetLease(name);
    return written;
  }

  /** Writes the status part of a record as given (a migration's), by compare-and-swap. */
  async writeStatus(source: string, status: ClusterStatus, depth: number): Promise<void> {
    await this.updateStatus(source, status.cluster, status.hostNamespace, () => status, depth);
  }

  /** Writes the inventory part of a record: the keys (objectKey) of the host objects vc applied for the cluster. */
  async writeInventory(source: string, cluster: string, hostNamespace: string, keys: Iterable<string>): Promise<void> {
    const text = inventoryText(keys);
    await this.updateInventory(source, cluster, hostNamespace, () => text);
  }

  /**
   * Changes the inventory part of a record by compare-and-swap: `next` gets the inventory as stored now and returns
   * the new one (keys, or their stored text), or undefined to keep it.
   */
  async updateInventory(
    source: string,
    cluster: string,
    hostNamespace: string,
    next: (stored: readonly string[]) => Iterable<string> | string | undefined,
  ): Promise<void> {
    await this.swap(source, cluster, hostNamespace, (current) => {
      const keys = next(current?.inventory ?? []);
      if (keys === undefined) return current ? undefined : { data: { [INVENTORY_KEY]: "[]" } };
      const text = typeof keys === "string" ? keys : inventoryText(keys);
      if (current && inventoryText(current.inventory) === text) return undefined;
      return { data: { [INVENTORY_KEY]: text } };
    });
  }

  /** Suspends (reason) or resumes (undefined) a cluster's reconciliation at run time: an annotation of the record. */
  async setSuspension(
    source: string,
    cluster: string,
    hostNamespace: string,
    reason: string | undefined,
  ): Promise<void> {
    await this.swap(source, cluster, hostNamespace, (current) => {
      if (reason === undefined)
        return current?.suspendedBy !== undefined ? { annotations: { [ANNOTATIONS.suspendedBy]: null } } : undefined;
      return current?.suspendedBy === reason ? undefined : { annotations: { [ANNOTATIONS.suspendedBy]: reason } };
    });
  }

  // ---- apply leases: which run writes a cluster's objects (lease.ts) ----

  /** This store's run: the holder its apply leases name. */
  readonly runId = `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
  /** The leader Lease this store's run writes under (a reconciler with leader election): its leases name it. */
  leader?: { lease: string; identity: string };
  /**
   * Set by a reconciler with leader election: a lease held under the same leader Lease by another identity is void
   * while this replica leads (that replica lost the Lease and may write no more).
   */
  leading?: () => boolean;
  /** The leases this run holds, by record name: when last renewed (local clock), and why one was lost. */
  private readonly held = new Map<string, HeldLease>();
  /** Other runs' leases as first seen unchanged (local clock): a lease unchanged for its duration is gone. */
  private readonly observed = new Map<string, { text: string; at: number }>();
  private renewer?: NodeJS.Timeout;

  /**
   * Takes the apply lease of a cluster before its objects are written, by compare-and-swap on `basedOn`: the
   * resourceVersion of the record the run's plan was computed against (null: the plan saw no record). `add`: keys put
   * on the record's inventory in the same write (the objects the run is about to create). Answers "stale" when the
   * record changed since (plan again), "busy" while another run's lease is live (after waiting up to `waitMs` for it
   * to end or lapse), else "claimed": the lease is renewed until the status write or release() gives it up.
   */
  async claim(
    source: string,
    cluster: string,
    hostNamespace: string,
    opts: {
      basedOn?: string | null;
      add?: Iterable<string>;
      run?: { via: string; revision?: string };
      waitMs?: number;
      onWait?: (lease: ApplyLease) => void;
    },
  ): Promise<Claim> {
    const run = opts.run ?? { via: "vc" };
    const name = recordName(source, cluster);
    const until = Date.now() + (opts.waitMs ?? 0);
    const add = opts.add ? [...opts.add] : [];
    let waited = false;
    for (;;) {
      let outcome: Claim | undefined;
      try {
        await this.swap(source, cluster, hostNamespace, (current) => {
          if (opts.basedOn !== undefined && (current?.resourceVersion ?? null) !== opts.basedOn) {
            outcome = { state: "stale" };
            return undefined;
          }
          const lease = current?.applying;
          if (lease && lease.holder !== this.runId && !this.isGone(name, lease)) {
            outcome = { state: "busy", lease };
            return undefined;
          }
          outcome = lease && lease.holder !== this.runId ? { state: "claimed", over: lease } : { state: "claimed" };
          const data: Record<string, string> = {};
          if (add.length > 0) data[INVENTORY_KEY] = inventoryText([...(current?.inventory ?? []), ...add]);
          return { annotations: { [APPLYING_ANNOTATION]: leaseText(this.lease(run)) }, data };
        });
      } catch (err) {
        // A race lost more than once: the record is being written; plan again.
        if (err instanceof KubeApiError && err.status === 409) return { state: "stale" };
        throw err;
      }
      if (outcome?.state === "claimed") {
        const over = outcome.over ?? this.held.get(name)?.over;
        this.held.set(name, { source, cluster, hostNamespace, run, renewedAt: Date.now(), ...(over ? { over } : {}) });
        this.startRenewing();
        return { ...outcome, ...(over ? { over } : {}), ...(waited ? { waited } : {}) };
      }
      if (outcome?.state !== "busy" || Date.now() >= until) return outcome ?? { state: "stale" };
      if (!waited) opts.onWait?.(outcome.lease);
      waited = true;
      await sleep(Math.min(1000, Math.max(0, until - Date.now())));
      // The next read asks the server: the other run's lease renewed, released or lapsed.
      this.noteWrite(name, undefined, false, true);
      opts.basedOn = undefined;
    }
  }

  /**
   * Until when this run may go on writing a cluster's objects: the lease's last renewal plus the renew deadline
   * (Infinity when the run holds no lease of it). Throws LeaseLostError once another run took the lease over.
   */
  writeDeadline(source: string, cluster: string): number {
    const held = this.held.get(recordName(source, cluster));
    if (!held) return Infinity;
    if (held.lost) throw new LeaseLostError(cluster, held.lost);
    return held.renewedAt + APPLY_LEASE_RENEW_DEADLINE_MS;
  }

  /** Gives up this run's lease of a cluster (the run wrote nothing, or its status is not this store's to write). */
  async release(source: string, cluster: string): Promise<void> {
    const name = recordName(source, cluster);
    if (!this.held.has(name)) return;
    this.forgetLease(name);
    await this.swap(source, cluster, "", (current) =>
      current?.applying?.holder === this.runId ? { annotations: { [APPLYING_ANNOTATION]: null } } : undefined,
    );
  }

  /** Gives up every lease this run still holds (the end of a run; failures are the next run's to clear). */
  async releaseAll(): Promise<void> {
    for (const h of [...this.held.values()]) await this.release(h.source, h.cluster).catch(() => undefined);
    this.stopRenewing();
  }

  /**
   * Whether another run's lease is gone: its process on this machine ended, it lapsed, or its replica lost the lead.
   */
  isGone(name: string, lease: ApplyLease, now = Date.now()): boolean {
    if (lease.holder === this.runId) return false;
    if (lease.host === hostname() && lease.pid > 0 && lease.pid !== process.pid && !processAlive(lease.pid))
      return true;
    const mine = this.leader;
    if (
      mine &&
      lease.leader?.lease === mine.lease &&
      lease.leader.identity !== mine.identity &&
      (this.leading?.() ?? false)
    )
      return true;
    // A renewal older than the lease by more than clocks may differ is gone at once; else after it was seen unchanged
    // for the lease's duration (this machine's clock only, as client-go's leader election judges a Lease).
    const renewed = Date.parse(lease.renewTime);
    if (Number.isFinite(renewed) && now - renewed > lease.durationSeconds * 1000 + MAX_CLOCK_SKEW_MS) return true;
    const text = leaseText(lease);
    const seen = this.observed.get(name);
    if (!seen || seen.text !== text) {
      this.observed.set(name, { text, at: now });
      return false;
    }
    return now - seen.at >= lease.durationSeconds * 1000;
  }

  /** The lease this run writes now. */
  private lease(run: { via: string; revision?: string }): ApplyLease {
    return {
      holder: this.runId,
      host: hostname(),
      pid: process.pid,
      via: run.via,
      ...(run.revision ? { revision: run.revision } : {}),
      ...(this.leader ? { leader: this.leader } : {}),
      renewTime: new Date().toISOString(),
      durationSeconds: APPLY_LEASE_SECONDS,
    };
  }

  private forgetLease(name: string): void {
    this.held.delete(name);
    if (this.held.size === 0) this.stopRenewing();
  }

  private startRenewing(): void {
    if (this.renewer) return;
    this.renewer = setInterval(() => void this.renewAll(), APPLY_LEASE_RENEW_MS);
    this.renewer.unref();
  }

  private stopRenewing(): void {
    if (this.renewer) clearInterval(this.renewer);
    this.renewer = undefined;
  }

  /** Renews every held lease (compare-and-swap); one another run took over is marked lost: its writes stop. */
  private async renewAll(): Promise<void> {
    for (const [name, h] of [...this.held]) {
      if (h.lost) continue;
      const at = Date.now();
      try {
        await this.swap(h.source, h.cluster, "", (current) => {
          if (current?.applying?.holder !== this.runId) {
            h.lost = current?.applying ?? LEASE_GIVEN_UP;
            return undefined;
          }
          return { annotations: { [APPLYING_ANNOTATION]: leaseText(this.lease(h.run)) } };
        });
        if (!h.lost && this.held.get(name) === h) h.renewedAt = at;
      } catch {
        // Not renewed this time: the renew deadline decides whether the run may still write.
      }
    }
  }

  /** The older reconciliations kept of (source, cluster), newest first, merged with the status's own. */
  async history(source: string, status: ClusterStatus): Promise<Reconciliation[]> {
    return mergeEntries(status.history, await this.archived(source, status.cluster));
  }

  /** Deletes a record and its history outright (a hand-over to another source: vc adopt --from). */
  async forget(source: string, cluster: string): Promise<void> {
    await this.deleteRecord(source, cluster);
    await this.deleteHistory(source, cluster);
  }

  /**
   * Forgets a cluster (its folder removed and its objects pruned): its status and history. While its record still
   * holds objects (a kept Namespace), the record stays with them, so that the namespace stays claimed.
   */
  async remove(source: string, cluster: string): Promise<void> {
    const kept = await this.swap(source, cluster, "", (current) =>
      current && current.inventory.length > 0
        ? { data: removed(current, true), annotations: { [APPLYING_ANNOTATION]: null } }
        : undefined,
    );
    if (!kept || kept.inventory.length === 0) await this.deleteRecord(source, cluster);
    this.forgetLease(recordName(source, cluster));
    await this.deleteHistory(source, cluster);
  }

  /** Deletes a record ConfigMap (gone already is fine). */
  private async deleteRecord(source: string, cluster: string): Promise<void> {
    const name = recordName(source, cluster);
    await this.client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: this.namespace, name });
    this.noteWrite(name, undefined);
  }

  private async deleteHistory(source: string, cluster: string): Promise<void> {
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
    await this.guard.ensure();
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
          await this.client.request("POST", `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/configmaps`, {
            query: { fieldManager: FIELD_MANAGER },
            body: cm,
          });
        }
        return;
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 409 && attempt < CAS_TRIES) {
          await sleep(Math.floor(Math.random() * 50 * attempt));
          continue;
        }
        throw err;
      }
    }
  }

  private async archived(source: string, cluster: string): Promise<Reconciliation[]> {
    if (!(await this.guard.readable())) return [];
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
}
