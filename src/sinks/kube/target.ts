// The `kube` target: a live host through the kubeconfig; inventory by label-selected LISTs kept to vc's records,
// server-side apply, guarded deletes.
import type { KubeObject, ObjectRef } from "../../kube/object.js";
import { groupKind, objectKey, refObject, refOf } from "../../kube/object.js";
import { takeOwnershipName } from "../../plan/gates.js";
import { mapLimit } from "../../util/pool.js";
import { olderFirst, type ClusterRecord } from "../../records/record.js";
import { RecordStore, type Claim } from "../../records/store.js";
import { describeLease } from "../../records/lease.js";
import { KubeStatusStore, type StatusStoreOptions } from "../../records/status-store.js";
import { apiVersionOf, MESH_GROUP, RESOURCES, resourcePath, type ResourceType } from "../../kube/resources.js";
import { inventorySelector, LABELS } from "../../translate/keys.js";
import { SHARED_METRICS_PROXY } from "../../translate/metrics-proxy.js";
import { freshStatuses, readyClusters } from "../../model/proxy-status.js";
import { stripServerFields } from "../../plan/normalize.js";
import type { FleetReader, Target, WriteOptions } from "../types.js";
import { FleetInventoryReader, inNamespaceOrder } from "./fleet-inventory.js";
import { migrateRecords, migrationLine } from "./migrate.js";
import { resourceFor } from "../../kube/resources.js";
import { whoAmI, type Identity } from "../../host/identity.js";
import { KubeApiError, ResponseTooLarge, type KubeClient } from "../../host/client.js";
import { listBounded } from "../../host/bounded-list.js";
import { isPlatformNamespace } from "../../records/platform-namespace.js";
import { Discovery } from "../../host/discovery.js";
import { ClaimIndex } from "../../claims/claim-index.js";
import { liveClaimsOf } from "../../claims/host-claims.js";
import { MAX_SELECTED_VALUES, selectorIn } from "../../kube/selector.js";
import { groupBy } from "../../util/group.js";
import { DEFAULT_RECREATE_WAIT, recreateObject, type RecreateWait } from "./recreate.js";

/**
 * Kinds never in vc's inventory: synced by the syncer (pods, events), read-only, the reconciler's own (leases), or a
 * controller's (ReplicaSets, read for the pods a Deployment controls).
 */
const NOT_APPLIED = new Set(["Node", "Pod", "Event", "Lease", "ReplicaSet"]);

/** The kinds vc may have applied, listed to find a cluster's inventory: one LIST each. */
export const INVENTORY_TYPES: readonly ResourceType[] = RESOURCES.filter(
  (r) => !r.readOnly && !NOT_APPLIED.has(r.kind),
);

/** The kinds that claim public hosts (claims/host-claims.ts). */
const CLAIM_TYPES: readonly ResourceType[] = INVENTORY_TYPES.filter(
  (t) => t.group === MESH_GROUP && (t.kind === "Gateway" || t.kind === "VirtualService"),
);
const isClaimKind = (o: KubeObject): boolean =>
  o.apiVersion.startsWith(`${MESH_GROUP}/`) && (o.kind === "Gateway" || o.kind === "VirtualService");
/**
 * Bytes of one LIST of a chunk's objects of one kind (from the watch cache, one answer): a chunk of 100 clusters' own
 * objects of a kind are a few MiB at most; past this, someone else labelled objects as theirs.
 */
const CHUNK_LIST_BYTES = 8 * 1024 * 1024;
/** Namespaced kinds listed at once for a chunk: at most this many answers of CHUNK_LIST_BYTES are read at a time. */
const KINDS_AT_ONCE = 4;
/** How a read of recorded inventory selects: one cluster (`inventory=c`), a chunk (`inventory in (…)`), every one. */
type Reach = "one" | "chunk" | "fleet";
/** A migration's read of one kind's objects labelled as a cluster's (metadata only). */
const LEGACY_LIST_BOUNDS = { maxObjects: 5_000, maxBytes: 16 * 1024 * 1024, pageSize: 500 };
/** How long read claims are reused when nothing else renews them (a long-running reconciler between full passes). */
const CLAIMS_MAX_AGE_MS = 30_000;

export class KubeTarget implements Target {
  readonly description: string;

  /** How long a recreate waits for the old object to be gone (tests shorten it). */
  recreateWait: RecreateWait = DEFAULT_RECREATE_WAIT;

  private readonly discovery: Discovery;
  private claims: { at: number; index: Promise<ClaimIndex> } | undefined;

  /** vc's records (records namespace): the authority on what vc applied for each cluster. */
  readonly records: RecordStore;
  /**
   * The source (owner name) whose records this run reads; undefined: each cluster's holder (the oldest record). Set by
   * the command or the reconciler once the owner is known.
   */
  source?: string;
  /**
   * Records found in host namespaces and not yet written to the records namespace (a dry run's migration,
   * sinks/kube/migrate.ts).
   */
  readonly pending = new Map<string, ClusterRecord>();

  constructor(
    readonly client: KubeClient,
    records?: RecordStore,
  ) {
    this.discovery = new Discovery(client);
    this.description = `kube context ${client.contextName} (${client.server})`;
    this.records = records ?? new RecordStore(client);
  }

  /**
   * The records this run reads, by cluster: this source's (or each cluster's holder without a source), with the
   * migrations not yet written. One LIST of the records namespace.
   */
  async recordsByCluster(only?: readonly string[]): Promise<Map<string, ClusterRecord>> {
    // A few clusters: one LIST naming them, whose answer the unit of work remembers (RecordStore.listClusters).
    if (only && only.length > 0 && new Set(only).size <= MAX_SELECTED_VALUES)
      return this.readRecords(await this.records.listClusters(only, this.source));
    return this.readRecords(await this.records.list());
  }

  /** Of records listed, the ones this run reads by cluster (recordsByCluster). */
  private readRecords(listed: readonly ClusterRecord[]): Map<string, ClusterRecord> {
    const out = new Map<string, ClusterRecord>();
    for (const r of listed) {
      if (this.source !== undefined ? r.source === this.source : !out.has(r.cluster)) out.set(r.cluster, r);
    }
    for (const [cluster, r] of this.pending) if (!out.has(cluster)) out.set(cluster, r);
    return out;
  }

  /**
   * The live objects of one cluster that its record holds: the LISTs of a chunk of one (listRecordedInventory), so that
   * objects labelled as the cluster's elsewhere are read only within their bound.
   */
  async listInventory(cluster: string): Promise<KubeObject[]> {
    return (await this.listRecordedInventory([cluster], undefined, "one")).get(cluster) ?? [];
  }

  /**
   * This source's record of a cluster (one GET; a pending migration when none is written), or the holder's without a
   * source.
   */
  async recordOf(cluster: string): Promise<ClusterRecord | undefined> {
    if (this.source === undefined) return (await this.recordsByCluster()).get(cluster);
    return (await this.records.read(this.source, cluster)) ?? this.pending.get(cluster);
  }

  /**
   * The metadata of the objects of every inventory kind labelled as `cluster`'s, cluster-scoped and in `hostNamespace`
   * (migrations of what vc applied before records): bounded per kind (LEGACY_LIST_BOUNDS); a read past its bound
   * throws, and the migration of that cluster waits.
   */
  async listLegacyInventory(cluster: string, hostNamespace: string): Promise<KubeObject[]> {
    const lists = await mapLimit(INVENTORY_TYPES, KINDS_AT_ONCE, async (t) => {
      const path = resourcePath(t, t.namespaced ? hostNamespace : undefined);
      const read = await listBounded<KubeObject, KubeObject>(
        this.client,
        path,
        { labelSelector: inventorySelector(cluster) },
        { ...LEGACY_LIST_BOUNDS, metadataOnly: true },
        (o) => ({ ...o, apiVersion: apiVersionOf(t), kind: t.kind }),
      );
      if (read.stopped)
        throw new Error(
          `the ${t.plural} labelled as cluster ${cluster}'s in ${hostNamespace} are ${read.stopped}: not migrated; ` +
            `remove the ones vc did not apply`,
        );
      return read.items;
    });
    return lists.flat();
  }

  /**
   * Forgets the claims read so far: a new unit of work (a reconciler pass) reads the host's claims afresh, so a rival's
   * claim made since is seen.
   */
  forgetHostClaims(): void {
    this.claims = undefined;
  }

  /**
   * The live claims of public hosts (vc's Gateways and VirtualServices across namespaces), kept to the objects a record
   * of any source holds (a label in a tenant's namespace is no claim): read once and reused until this target deletes
   * or recreates one of those kinds, reads the fleet's inventory (which holds them: no extra LIST), or
   * CLAIMS_MAX_AGE_MS pass; what it applies is folded in (foldClaim); so a fleet of clusters with Gateways costs two
   * paged LISTs and the records' LIST per run, not per cluster. Indexed by host (ClaimIndex).
   */
  async hostClaimIndex(): Promise<ClaimIndex> {
    if (this.claims && Date.now() - this.claims.at <= CLAIMS_MAX_AGE_MS) return this.claims.index;
    const at = Date.now();
    const index = (async () => {
      // Read from the store a page at a time, each object reduced to its claims and its reference as its page arrives:
      // from the watch cache the fleet's Gateways and VirtualServices come in one page, parsed whole (about 100 MiB at
      // 10,000 clusters, for each refresh). The records are read beside them: only objects a record of their cluster
      // holds are claims.
      const claimed = (o: KubeObject) => ({
        cluster: o.metadata.labels?.[LABELS.inventory] ?? "",
        object: refObject(refOf(o)),
        claims: liveClaimsOf(o),
      });
      const [lists, records] = await Promise.all([
        Promise.all(
          CLAIM_TYPES.map((t) =>
            this.client.listMapped(t, { labelSelector: LABELS.inventory }, claimed).catch(notServed),
          ),
        ),
        this.records.list(),
      ]);
      const held = heldByCluster(records);
      return ClaimIndex.ofClaimed(
        lists.flat().filter((c) => isHeld(held, c.cluster, c.object)),
        liveClaimsOf,
      );
    })();
    this.claims = { at, index };
    index.catch(() => {
      if (this.claims?.index === index) this.claims = undefined;
    });
    return index;
  }

  async listInventories(clusters: readonly string[], opts?: { fresh?: boolean }): Promise<Map<string, KubeObject[]>> {
    if (clusters.length === 0) return new Map();
    // A kind the host does not serve (mesh CRDs not installed: 404) holds nothing; the plan then says what is missing.
    return this.listRecordedInventory(clusters, undefined, "chunk", opts?.fresh);
  }

  /** The clusters this source has records of (one LIST of the records namespace). */
  async clusterNames(): Promise<string[]> {
    return [...(await this.recordsByCluster()).keys()].sort();
  }

  /**
   * The fleet's live objects by one paged LIST per kind from the store, handed out a chunk at a time in the order the
   * store lists them: by the host namespace each cluster's record names (the repository's for one without a record).
   */
  async fleetReader(
    clusters: readonly string[],
    known: ReadonlyMap<string, string>,
    opts: { pageSize?: number } = {},
  ): Promise<FleetReader> {
    const records = await this.recordsByCluster();
    const order = inNamespaceOrder(clusters, (c) => records.get(c)?.hostNamespace ?? known.get(c));
    const reader = new FleetInventoryReader(
      this.client,
      INVENTORY_TYPES,
      records,
      order,
      (names) => this.listInventories(names),
      opts,
    );
    return {
      order,
      take: (names) => reader.take(names),
      get fellBack() {
        return reader.fellBack;
      },
    };
  }

  actor(): Promise<Identity> {
    return whoAmI(this.client);
  }

  get recordsNamespace(): string {
    return this.records.namespace;
  }

  /**
   * The clusters vc applied before records (an inventory-labelled Namespace: cluster-scoped, no tenant may label one),
   * with their host namespace: what a pass migrates. One small LIST.
   */
  async legacyClusters(): Promise<Array<{ cluster: string; hostNamespace: string }>> {
    const namespaces = await this.client.list(resourceFor("v1", "Namespace")!, { labelSelector: LABELS.inventory });
    return namespaces
      .map((n) => ({ cluster: n.metadata.labels![LABELS.inventory]!, hostNamespace: n.metadata.name }))
      .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  }

  async migrateRecords(
    clusters: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
    opts: { dryRun?: boolean; historyLimit?: number } = {},
  ): Promise<Array<{ cluster: string; hostNamespace: string; message: string }>> {
    const done = await migrateRecords(this, clusters, opts);
    return done.map((m) => ({
      cluster: m.cluster,
      hostNamespace: m.hostNamespace,
      message: migrationLine(m, !!opts.dryRun),
    }));
  }

  startUnit(opts: { fleet?: boolean; forgetClaims?: boolean } = {}): void {
    this.records.memoize({ fleet: !!opts.fleet });
    if (opts.forgetClaims) this.forgetHostClaims();
  }

  endUnit(): void {
    this.records.unmemoize();
  }

  get unitOpen(): boolean {
    return this.records.memoized;
  }

  /**
   * The recorded live inventory of the named clusters: one LIST per kind selecting them (from the watch cache), each
   * answer read up to CHUNK_LIST_BYTES for every hundred clusters. A LIST past it holds objects someone labelled as
   * these clusters' (whoever may write a host namespace may label what it writes there): that kind is then read a
   * hundred clusters at a time, and for a hundred by name, the objects the records hold one GET each, nothing else.
   * `fresh`: the objects read from the server's store, not its watch cache (a cluster planned again after another run
   * wrote it).
   */
  async listRecordedInventory(
    clusters: readonly string[],
    known?: ReadonlyMap<string, ClusterRecord>,
    reach: Reach = "chunk",
    fresh = false,
  ): Promise<Map<string, KubeObject[]>> {
    const records = known ? Promise.resolve(known) : this.recordsByCluster(clusters);
    records.catch(() => undefined);
    const read = (t: ResourceType) => this.recordedKind(t, clusters, records, reach, fresh);
    // Cluster-scoped kinds only the platform writes: all at once; namespaced ones KINDS_AT_ONCE at a time.
    const lists = await Promise.all([
      Promise.all(INVENTORY_TYPES.filter((t) => !t.namespaced).map(read)),
      mapLimit(
        INVENTORY_TYPES.filter((t) => t.namespaced),
        KINDS_AT_ONCE,
        read,
      ),
    ]);
    return keptToRecords(lists.flat(2), clusters, await records);
  }

  /** One kind of listRecordedInventory, its LIST selecting as `reach` says. */
  private async recordedKind(
    t: ResourceType,
    clusters: readonly string[],
    records: Promise<ReadonlyMap<string, ClusterRecord>>,
    reach: Reach,
    fresh = false,
  ): Promise<KubeObject[]> {
    const selector =
      reach === "fleet"
        ? LABELS.inventory
        : reach === "one"
          ? inventorySelector(clusters[0]!)
          : selectorIn(LABELS.inventory, clusters);
    const maxBytes = CHUNK_LIST_BYTES * Math.max(1, Math.ceil(clusters.length / MAX_SELECTED_VALUES));
    try {
      return await this.listKind(t, selector, undefined, maxBytes, fresh);
    } catch (err) {
      if (!(err instanceof ResponseTooLarge)) throw err;
    }
    this.tell(
      `the LIST of ${t.plural} labelled as the inventory of ${clusters.length} cluster(s) is longer than ` +
        `${maxBytes} bytes (objects someone else labelled): read ` +
        `${clusters.length > MAX_SELECTED_VALUES ? "a hundred clusters at a time" : "by name"} instead`,
    );
    if (clusters.length <= MAX_SELECTED_VALUES) return this.recordedByName(t, clusters, await records);
    const out: KubeObject[] = [];
    for (let i = 0; i < clusters.length; i += MAX_SELECTED_VALUES)
      out.push(...(await this.recordedKind(t, clusters.slice(i, i + MAX_SELECTED_VALUES), records, "chunk", fresh)));
    return out;
  }

  /** The objects of kind `t` the records of `clusters` hold, one GET each (absent ones left out). */
  private async recordedByName(
    t: ResourceType,
    clusters: readonly string[],
    records: ReadonlyMap<string, ClusterRecord>,
  ): Promise<KubeObject[]> {
    const kind = groupKind(apiVersionOf(t), t.kind);
    const refs: ObjectRef[] = [];
    for (const c of clusters)
      for (const key of records.get(c)?.inventory ?? []) {
        const ref = refOfKey(key, kind, apiVersionOf(t));
        if (ref) refs.push(ref);
      }
    const found = await mapLimit(refs, 8, (r) => this.getServed(r));
    return found
      .filter((o): o is KubeObject => o !== undefined)
      .map((o) => ({ ...o, apiVersion: apiVersionOf(t), kind: t.kind }));
  }

  /** Every recorded cluster's live inventory: one LIST per kind for the fleet, bounded as listRecordedInventory's. */
  async listFleetInventory(): Promise<Map<string, KubeObject[]>> {
    const records = await this.recordsByCluster();
    return this.listRecordedInventory([...records.keys()].sort(), records, "fleet");
  }

  /** Where the target tells what it did instead of what it was asked (a read past its bound); stderr by default. */
  tell: (message: string) => void = (message) => process.stderr.write(`vc: ${message}\n`);

  /**
   * Objects taken over on purpose by this run (`vc adopt --take-ownership`), named `Kind/namespace/name` or
   * `Kind/name`.
   */
  readonly takeOver = new Set<string>();

  takeOwnership(names: readonly string[]): void {
    for (const name of names) this.takeOver.add(name);
  }

  /**
   * Starts a hand-over from source `from`: its record of the cluster (inventory, status, older history) becomes this
   * source's for the run, so that the plan updates what it holds; once the run is recorded, its record is removed.
   */
  async beginHandOver(cluster: string, from: string, opts: { dryRun: boolean }): Promise<void> {
    const theirs = await this.records.read(from, cluster);
    if (!theirs) return;
    const source = this.source ?? "";
    const mine = await this.records.read(source, cluster);
    const status = theirs.status ? { ...theirs.status, owner: from } : undefined;
    const { resourceVersion: _theirs, applying: _lease, ...record } = theirs;
    this.pending.set(cluster, {
      ...record,
      source,
      inventory: [...new Set([...(mine?.inventory ?? []), ...theirs.inventory])].sort(),
      status,
      suspendedBy: undefined,
      // The version and lease of this source's own record, which the run's writes compare and swap on.
      ...(mine?.resourceVersion ? { resourceVersion: mine.resourceVersion } : {}),
      ...(mine?.applying ? { applying: mine.applying } : {}),
    });
    if (opts.dryRun || !status) return;
    const older = await this.records.history(from, { ...status, history: [] });
    if (older.length > 0) await this.records.archive(source, cluster, older, Number.MAX_SAFE_INTEGER);
  }

  async endHandOver(cluster: string, from: string): Promise<void> {
    await this.records.forget(from, cluster);
  }

  readonly recorded = true;

  async existingUnrecorded(
    cluster: string,
    refs: readonly ObjectRef[],
  ): Promise<{ foreign: KubeObject[]; taken: KubeObject[] }> {
    const record = await this.recordOf(cluster);
    const held = new Set(record?.inventory ?? []);
    const todo = refs.filter((r) => !held.has(objectKey(r)));
    // Objects in a namespace that does not exist yet cannot exist: one GET for the namespace instead of one each.
    const absent = new Set<string>();
    const found = new Map<string, KubeObject>();
    for (const r of todo.filter((r) => r.kind === "Namespace" && r.apiVersion === "v1")) {
      const live = await this.client.get(r);
      if (live) found.set(objectKey(r), live);
      else absent.add(r.name);
    }
    await mapLimit(
      todo.filter(
        (r) => !(r.kind === "Namespace" && r.apiVersion === "v1") && !(r.namespace && absent.has(r.namespace)),
      ),
      8,
      async (r) => {
        const live = await this.getServed(r);
        if (live) found.set(objectKey(r), { ...live, apiVersion: r.apiVersion, kind: r.kind });
      },
    );
    const foreign: KubeObject[] = [];
    const taken: KubeObject[] = [];
    // A platform namespace (records, Leases) is never a cluster's, not even taken over on purpose.
    for (const live of found.values())
      (this.takeOver.has(takeOwnershipName(refOf(live))) && !(live.kind === "Namespace" && isPlatformNamespace(live))
        ? taken
        : foreign
      ).push(live);
    return { foreign, taken };
  }

  /** Claims checked ahead for a chunk of clusters (primeClaims): each answers its cluster's next check once. */
  private readonly primed = new Map<string, { message: string; sources: string[] } | null>();

  /**
   * Checks the claims of many clusters at once (claimantsOf), for the single checks that follow (a reconciler pass's
   * chunk).
   */
  async primeClaims(claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>): Promise<void> {
    if (claims.length === 0) return;
    const held = this.checkClaims(claims, [], await this.claimantsOf(claims));
    for (const c of claims) this.primed.set(`${c.cluster}\n${c.hostNamespace}`, held.get(c.cluster) ?? null);
  }

  async heldElsewhere(
    claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
    adoptFrom: readonly string[] = [],
  ): Promise<Map<string, { message: string; sources: string[] }>> {
    const out = new Map<string, { message: string; sources: string[] }>();
    // Without a source (vc list of a platform user) every cluster is read as its holder's: nobody to refuse.
    if (claims.length === 0 || this.source === undefined) return out;
    const key =
      claims.length === 1 && adoptFrom.length === 0 ? `${claims[0]!.cluster}\n${claims[0]!.hostNamespace}` : undefined;
    if (key !== undefined && this.primed.has(key)) {
      const held = this.primed.get(key);
      this.primed.delete(key);
      if (held) out.set(claims[0]!.cluster, held);
      return out;
    }
    return this.checkClaims(claims, adoptFrom, await this.claimantsOf(claims));
  }

  /**
   * The records that may rival the claims: for a cluster or a chunk the LISTs of their claimants only; more: one LIST
   * of every record.
   */
  private claimantsOf(claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>): Promise<ClusterRecord[]> {
    return claims.length <= MAX_SELECTED_VALUES ? this.records.claimants(claims) : this.records.list();
  }

  /** The claims an older record of `listed` holds for someone else (heldElsewhere). */
  private checkClaims(
    claims: ReadonlyArray<{ cluster: string; hostNamespace: string }>,
    adoptFrom: readonly string[],
    listed: readonly ClusterRecord[],
  ): Map<string, { message: string; sources: string[] }> {
    const out = new Map<string, { message: string; sources: string[] }>();
    const source = this.source ?? "";
    const all = listed.filter((r) => !adoptFrom.includes(r.source));
    const mine = new Map(all.filter((r) => r.source === source).map((r) => [r.cluster, r]));
    for (const [cluster, r] of this.pending) if (!mine.has(cluster)) mine.set(cluster, r);
    // The records that may rival a claim are those of its cluster and of its namespace: looked up, not scanned (a
    // chunk's claims against a fleet's records), and taken in the listed order, older claim first.
    const byCluster = groupBy(all, (r) => r.cluster);
    const byNamespace = groupBy(all, (r) => r.hostNamespace);
    const order = new Map(all.map((r, i) => [r, i]));
    for (const claim of claims) {
      const own = mine.get(claim.cluster) ?? {
        source,
        cluster: claim.cluster,
        hostNamespace: claim.hostNamespace,
        inventory: [],
      };
      const candidates = [
        ...new Set([...(byCluster.get(claim.cluster) ?? []), ...(byNamespace.get(claim.hostNamespace) ?? [])]),
      ].sort((a, b) => order.get(a)! - order.get(b)!);
      const rival = candidates.find(
        (r) =>
          (r.source !== source
            ? r.cluster === claim.cluster || r.hostNamespace === claim.hostNamespace
            : r.cluster !== claim.cluster && r.hostNamespace === claim.hostNamespace) && olderFirst(r, own) < 0,
      );
      if (!rival) continue;
      const since = rival.since ? ` since ${rival.since}` : "";
      if (rival.source === source) {
        out.set(claim.cluster, {
          sources: [],
          message:
            `host namespace ${claim.hostNamespace} is held by cluster ${rival.cluster} of this source (its ` +
            `record${since}); cluster ${claim.cluster} is refused and nothing of it is changed: give it a ` +
            `namespace of its own in clusters/${claim.cluster}/cluster.yaml`,
        });
        continue;
      }
      const what =
        rival.cluster === claim.cluster
          ? `cluster ${claim.cluster}`
          : `host namespace ${claim.hostNamespace} (as cluster ${rival.cluster})`;
      out.set(claim.cluster, {
        sources: [rival.source],
        message:
          `${what} is held by source ${rival.source || "(unnamed)"} (its record${since} is older than this ` +
          `source's claim); this source (${source || "unnamed"}) is refused and nothing of cluster ` +
          `${claim.cluster} is changed or pruned. ` +
          (rival.cluster === claim.cluster
            ? `To hand it over, run vc adopt ${claim.cluster} --from ${rival.source || "''"} with this source ` +
              "(see docs/security-model.md)"
            : `Choose another host namespace in clusters/${claim.cluster}/cluster.yaml`),
      });
    }
    return out;
  }

  unwrittenRecord(cluster: string): boolean {
    return this.pending.has(cluster);
  }

  /** Records what vc now holds of a cluster (after an apply): the inventory part of its record. */
  async recordInventory(cluster: string, hostNamespace: string, keys: Iterable<string>): Promise<void> {
    try {
      await this.records.writeInventory(this.source ?? "", cluster, hostNamespace, keys);
    } catch (err) {
      throw recordsForbidden(err, this.records.namespace);
    }
    this.pending.delete(cluster);
  }

  /**
   * Set by a reconciler with leader election: until when this replica may write (its Lease's last renewal plus the
   * renew deadline); every write is fenced by it (host/client.ts RequestOptions.fence) beside the cluster's apply
   * lease.
   */
  fence?: () => number;

  async claim(
    cluster: string,
    hostNamespace: string,
    opts: {
      basedOn: string | null;
      add: readonly string[];
      run: { via: string; revision?: string };
      waitMs?: number;
      onWait?: (holder: string) => void;
    },
  ): Promise<Claim> {
    try {
      return await this.records.claim(this.source ?? "", cluster, hostNamespace, {
        basedOn: opts.basedOn,
        add: opts.add,
        run: opts.run,
        waitMs: opts.waitMs,
        onWait: (lease) => opts.onWait?.(describeLease(lease)),
      });
    } catch (err) {
      throw recordsForbidden(err, this.records.namespace);
    }
  }

  async release(cluster: string): Promise<void> {
    await this.records.release(this.source ?? "", cluster);
  }

  /** Until when a write for `cluster` may be sent: its apply lease's and this replica's Lease's renew deadlines. */
  private writeFence(cluster: string | undefined): (() => number) | undefined {
    if (cluster === undefined && !this.fence) return undefined;
    return () =>
      Math.min(
        this.fence?.() ?? Infinity,
        cluster === undefined ? Infinity : this.records.writeDeadline(this.source ?? "", cluster),
      );
  }

  readObject(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.getServed(ref);
  }

  async apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const resourceVersion = opts.resourceVersion;
    const writes = {
      ...(resourceVersion !== undefined && !opts.dryRun ? { resourceVersion } : {}),
      ...(opts.dryRun ? {} : { fence: this.writeFence(opts.cluster) }),
    };
    if (opts.dryRun || !isClaimKind(obj))
      return this.client.apply(stripServerFields(obj), { dryRun: opts.dryRun, ...writes });
    try {
      const applied = await this.client.apply(stripServerFields(obj), writes);
      this.foldClaim(applied);
      return applied;
    } catch (err) {
      this.claims = undefined;
      throw err;
    }
  }

  /**
   * Puts a claim this target just applied into the claims read before (the server's answer: its creationTimestamp is
   * the claim's age), instead of reading every claim and record of the host again: a first apply of N clusters with
   * Gateways would otherwise LIST the fleet's claims and records after each cluster. Its cluster's record holds it by
   * the end of the cluster's sync (recordInventory); the claims still expire after CLAIMS_MAX_AGE_MS.
   */
  private foldClaim(applied: KubeObject): void {
    const cached = this.claims;
    if (!cached || !applied?.metadata) {
      this.claims = undefined;
      return;
    }
    // In place: the index answers the checks that follow (an applied claim replaces what it held for the object).
    void cached.index.then(
      (index) => index.put(applied),
      () => undefined,
    );
  }

  async delete(live: KubeObject, cluster: string, opts: WriteOptions): Promise<"deleted" | "gone" | "not-owned"> {
    if (!opts.dryRun && isClaimKind(live)) this.claims = undefined;
    let current: KubeObject | undefined = live;
    const fence = opts.dryRun ? undefined : this.writeFence(cluster);
    // Three tries: a 409 means a precondition failed (the object was replaced, or changed since it was read): read it
    // again and decide again (still this cluster's, by its label).
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!current) return "gone";
      if (current.metadata.labels?.[LABELS.inventory] !== cluster) return "not-owned";
      try {
        const { uid, resourceVersion } = current.metadata;
        const preconditions = uid || resourceVersion ? { uid, resourceVersion } : undefined;
        const deleted = await this.client.delete(refOf(current), {
          dryRun: opts.dryRun,
          preconditions,
          ...(fence ? { fence } : {}),
        });
        return deleted ? "deleted" : "gone";
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 409) || attempt === 2) throw err;
        current = await this.client.get(refOf(current));
      }
    }
    return "gone";
  }

  async recreate(live: KubeObject, desired: KubeObject, opts: WriteOptions): Promise<string[]> {
    if (!opts.dryRun && isClaimKind(live)) this.claims = undefined;
    return recreateObject(this.client, live, desired, opts, this.recreateWait);
  }

  async missingKinds(
    kinds: ReadonlyArray<{ apiVersion: string; kind: string }>,
  ): Promise<Array<{ apiVersion: string; kind: string }>> {
    return this.discovery.missing(kinds);
  }

  statusStore(opts: StatusStoreOptions = {}): KubeStatusStore {
    return new KubeStatusStore(this.client, { ...opts, source: this.source, records: this.records });
  }

  async metricsProxyReady(): Promise<ReadonlySet<string>> {
    const status = await this.getServed({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: SHARED_METRICS_PROXY.namespace,
      name: SHARED_METRICS_PROXY.statusConfigMap,
    });
    return readyClusters(freshStatuses(status?.data as Record<string, unknown> | undefined, Date.now()));
  }

  async close(): Promise<void> {
    this.client.close();
  }

  /** The object, or undefined when absent or of a kind the server does not serve. */
  private async getServed(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return await this.client.get(ref);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /**
   * One label-selected LIST of a kind, from the server's watch cache: moments behind its store, as a controller's
   * informer is, but a filter of what the server holds in memory instead of a read and decode of every object of the
   * kind from its store (a fleet's chunk selects a hundred clusters of thousands: from the store each chunk cost the
   * whole kind, and under a first apply's writes such a LIST took longer than the request budget). What vc plans on
   * from it may be moments old: each write carries the resourceVersion it was planned against (a 409 plans the object
   * again on what is live), a delete names the uid and resourceVersion it saw, the first write of a cluster compares
   * and swaps on its record, and a cluster planned again because another run wrote it is read from the store (`fresh`).
   * A kind the server does not serve (404) holds nothing. vc's records are read from the store.
   */
  private async listKind(
    type: ResourceType,
    labelSelector: string,
    namespace?: string,
    maxBytes?: number,
    fresh = false,
  ): Promise<KubeObject[]> {
    try {
      return await this.client.list(type, { labelSelector, namespace, fromCache: !fresh, maxBytes });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return [];
      throw err;
    }
  }
}

/**
 * The objects the records hold (objectKey), by cluster, of every source: the records' own key strings, not a new
 * string per object (a fleet's 200,000 joined keys held about 17 MiB while the claims were read).
 */
function heldByCluster(records: readonly ClusterRecord[]): Map<string, Set<string>> {
  const held = new Map<string, Set<string>>();
  for (const r of records) {
    let keys = held.get(r.cluster);
    if (!keys) held.set(r.cluster, (keys = new Set()));
    for (const k of r.inventory) keys.add(k);
  }
  return held;
}

/** Whether a record of `cluster` (the object's inventory label) holds the object. */
function isHeld(held: ReadonlyMap<string, ReadonlySet<string>>, cluster: string, o: KubeObject): boolean {
  return held.get(cluster)?.has(objectKey(o)) ?? false;
}

/** A refusal to write the records namespace, saying what vc needs there. */
function recordsForbidden(err: unknown, namespace: string): unknown {
  if (!(err instanceof KubeApiError && err.status === 403)) return err;
  return new Error(
    `${err.message} (vc needs get, create and patch on ConfigMaps in the records namespace ${namespace})`,
  );
}

/** A kind the server does not serve (404: its CRD is not installed) holds nothing. */
function notServed(err: unknown): never[] {
  if (err instanceof KubeApiError && err.status === 404) return [];
  throw err;
}

/**
 * The objects labelled for `cluster` that its record holds. A label is only where vc looks; the record says what is
 * vc's: a labelled object the record does not hold (planted by whoever may write the namespace) is never planned on.
 */
export function keptToRecord(
  labelled: readonly KubeObject[],
  cluster: string,
  record: ClusterRecord | undefined,
): KubeObject[] {
  if (!record) return [];
  const held = new Set(record.inventory);
  return labelled.filter((o) => o.metadata.labels?.[LABELS.inventory] === cluster && held.has(objectKey(o)));
}

/**
 * keptToRecord of many clusters, in the order given: the labelled objects are grouped by their inventory label once,
 * so a fleet's objects are walked once, not once per cluster (which made reading 1,000 clusters' inventory cost
 * 20 million label lookups).
 */
export function keptToRecords(
  labelled: readonly KubeObject[],
  clusters: readonly string[],
  records: ReadonlyMap<string, ClusterRecord>,
): Map<string, KubeObject[]> {
  const byCluster = groupBy(labelled, (o) => o.metadata.labels?.[LABELS.inventory]);
  return new Map(clusters.map((c) => [c, keptToRecord(byCluster.get(c) ?? [], c, records.get(c))]));
}

/** The reference of a record's key (objectKey: `group/Kind/namespace/name`) when it is of `kind` (groupKind). */
function refOfKey(key: string, kind: string, apiVersion: string): ObjectRef | undefined {
  if (!key.startsWith(`${kind}/`)) return undefined;
  const rest = key.slice(kind.length + 1);
  const slash = rest.indexOf("/");
  if (slash < 0 || rest.indexOf("/", slash + 1) >= 0) return undefined;
  const namespace = rest.slice(0, slash);
  const name = rest.slice(slash + 1);
  if (name === "") return undefined;
  return { apiVersion, kind: kind.slice(kind.lastIndexOf("/") + 1), name, ...(namespace ? { namespace } : {}) };
}
