// The live inventory of a whole-fleet plan read with one paged LIST per kind, handed out a chunk of clusters at a time.
import type { KubeObject } from "../../kube/object.js";
import { groupKind, objectKey } from "../../kube/object.js";
import { apiVersionOf, type ResourceType } from "../../kube/resources.js";
import type { ClusterRecord } from "../../records/record.js";
import { LABELS } from "../../translate/keys.js";
import { mapLimit } from "../../util/pool.js";
import { ExpiredContinue, KubeApiError, ResponseTooLarge, type KubeClient } from "../../host/client.js";
import { ReadOrderError } from "../types.js";

/**
 * Live objects read for clusters whose chunk has not been taken yet, past which the reader stops merging and reads the
 * remaining chunks one LIST per kind each: the merge keeps to a page or two per kind when the chunks come in the
 * store's order, and this bounds it when they do not (a cluster whose objects lie in several namespaces).
 */
const AHEAD_MAX = 10_000;

/**
 * Objects a page of the fleet's LISTs holds: with chunks of 100 clusters and one to four objects of a kind per cluster,
 * a page reaches one to three chunks ahead, and what it holds of later chunks waits for them.
 */
const FLEET_PAGE = 250;

/**
 * Bytes of one page's answer (FLEET_PAGE objects of vc's are well under a MiB): a longer page holds objects someone
 * else labelled as a cluster's inventory, and the reader goes back to a chunk at a time (whose reads are bounded too).
 */
const FLEET_PAGE_BYTES = 8 * 1024 * 1024;

/** Kinds whose pages are read at once: each page is parsed whole before it is sorted into chunks. */
const KINDS_AT_ONCE = 4;

/** More objects wait for later chunks than AHEAD_MAX: the reads stop where they are. */
class TooFarAhead extends Error {}

/**
 * Where a LIST of a kind returns an object: the store's key order is namespace, then name (cluster-scoped: "", then
 * name).
 */
const positionOf = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** A record's key (objectKey: `group/Kind/namespace/name`) split into its kind and its position in the kind's LIST. */
function splitKey(key: string): { kind: string; position: string } | undefined {
  const nameAt = key.lastIndexOf("/");
  const namespaceAt = nameAt > 0 ? key.lastIndexOf("/", nameAt - 1) : -1;
  if (namespaceAt <= 0) return undefined;
  return { kind: key.slice(0, namespaceAt), position: key.slice(namespaceAt + 1) };
}

/**
 * One kind's paged LIST, read a page at a time as far as the chunks in hand need; nothing of a page is kept but what is
 * routed.
 */
class KindCursor {
  /** The position of the last object read ("" before the first). */
  private last = "";
  private done = false;
  /** The next page's continue token (none before the first page). */
  private next: string | undefined;

  constructor(
    private readonly read: (cont: string | undefined) => Promise<{ items: KubeObject[]; continue?: string }>,
  ) {}

  /**
   * Reads pages until an object at or past `bound` has been read, the list has ended or `stopped` says so, each object
   * given to `route` (which may throw to stop at once).
   */
  async readTo(bound: string, route: (o: KubeObject) => void, stopped: () => boolean): Promise<void> {
    while (!this.done && this.last < bound && !stopped()) {
      let items: KubeObject[];
      try {
        const page = await this.read(this.next);
        items = page.items;
        this.next = page.continue;
        this.done = page.continue === undefined;
      } catch (err) {
        // A kind the server does not serve (its CRD is not installed) holds nothing.
        if (this.last === "" && this.next === undefined && err instanceof KubeApiError && err.status === 404) {
          this.done = true;
          return;
        }
        throw err;
      }
      for (const o of items) {
        const at = positionOf(o);
        if (at <= this.last)
          throw new ReadOrderError(
            `the server listed ${o.kind} ${at} after ${this.last}: not in its store's key order`,
          );
        this.last = at;
        route(o);
      }
    }
  }
}

/**
 * The live objects of a fleet's clusters, read for a plan of the whole fleet (vc diff): one LIST per kind for the
 * fleet, from the server's store, a page at a time, instead of one LIST per kind for each chunk of clusters. A LIST
 * from the store comes in the store's key order, namespace then name; a chunk's objects are in its clusters' host
 * namespaces, so when the chunks are taken in the order of those namespaces (inNamespaceOrder) each kind's LIST is
 * read just past the chunk's last object, and the objects of later chunks read meanwhile (a page's worth at most)
 * wait for theirs. How far a chunk needs each kind read comes from the records: the objects a cluster's record holds
 * are the ones planned on, as keptToRecord keeps them (a labelled object no record holds is let go as it is read).
 *
 * A continue token the server lets expire between two pages, or more than AHEAD_MAX objects waiting for later chunks
 * (the reads stop there: memory stays bounded whatever the order), make the chunk in hand and the rest be read one
 * LIST per kind each (byChunk); a LIST out of key order throws ReadOrderError, as a chunk may have been handed out
 * short of an object.
 */
export class FleetInventoryReader {
  private readonly cursors = new Map<string, KindCursor>();
  private readonly types: ReadonlyMap<string, ResourceType>;
  /** Clusters not yet taken, and (once an object of theirs is read) the keys their record holds. */
  private readonly waiting = new Map<string, ReadonlySet<string> | undefined>();
  /** Objects read for clusters not yet taken. */
  private readonly ahead = new Map<string, KubeObject[]>();
  /** How many objects `ahead` holds, and how many of them are for the chunk being taken. */
  private held = 0;
  private heldForChunk = 0;
  /** The clusters of the chunk being taken. */
  private chunk: ReadonlySet<string> = new Set();
  private readonly aheadMax: number;
  /** Why the reader went back to a LIST per kind and chunk, once it has. */
  fellBack: string | undefined;

  constructor(
    private readonly client: KubeClient,
    types: readonly ResourceType[],
    private readonly records: ReadonlyMap<string, ClusterRecord>,
    clusters: Iterable<string>,
    private readonly byChunk: (clusters: readonly string[]) => Promise<Map<string, KubeObject[]>>,
    private readonly limits: { pageSize?: number; aheadMax?: number; pageBytes?: number } = {},
  ) {
    this.types = new Map(types.map((t) => [groupKind(apiVersionOf(t), t.kind), t]));
    this.aheadMax = limits.aheadMax ?? AHEAD_MAX;
    for (const c of clusters) if (records.has(c)) this.waiting.set(c, undefined);
  }

  /** The live objects of the named clusters (each an empty list when nothing of it is live), let go by the reader. */
  async take(clusters: readonly string[]): Promise<Map<string, KubeObject[]>> {
    if (this.fellBack) return this.byChunk(clusters);
    this.chunk = new Set(clusters);
    this.heldForChunk = 0;
    const bounds = new Map<string, string>();
    for (const c of clusters) {
      this.heldForChunk += this.ahead.get(c)?.length ?? 0;
      for (const key of this.records.get(c)?.inventory ?? []) {
        const at = splitKey(key);
        if (at && this.types.has(at.kind) && at.position > (bounds.get(at.kind) ?? ""))
          bounds.set(at.kind, at.position);
      }
    }
    try {
      await mapLimit([...bounds], KINDS_AT_ONCE, ([kind, bound]) =>
        this.cursor(kind).readTo(bound, this.route, () => this.fellBack !== undefined),
      );
    } catch (err) {
      if (err instanceof ExpiredContinue) this.fallBack("a LIST's continue token expired");
      else if (err instanceof ResponseTooLarge)
        this.fallBack(`a page of ${err.path} was longer than ${err.maxBytes} bytes (objects someone else labelled)`);
      else if (!(err instanceof TooFarAhead)) throw err;
      return this.byChunk(clusters);
    }
    const out = new Map<string, KubeObject[]>();
    for (const c of clusters) {
      const objects = this.ahead.get(c) ?? [];
      out.set(c, objects);
      this.held -= objects.length;
      this.ahead.delete(c);
      this.waiting.delete(c);
    }
    return out;
  }

  private cursor(kind: string): KindCursor {
    let cursor = this.cursors.get(kind);
    if (!cursor) {
      const type = this.types.get(kind)!;
      const opts = {
        labelSelector: LABELS.inventory,
        limit: this.limits.pageSize ?? FLEET_PAGE,
        maxBytes: this.limits.pageBytes ?? FLEET_PAGE_BYTES,
      };
      this.cursors.set(kind, (cursor = new KindCursor((cont) => this.client.listPage(type, opts, cont))));
    }
    return cursor;
  }

  /**
   * Keeps an object read if the record of a cluster still to be taken holds it (its inventory label names the cluster);
   * past AHEAD_MAX objects waiting for later chunks, falls back and stops the reads.
   */
  private readonly route = (o: KubeObject): void => {
    if (this.fellBack) return;
    const cluster = o.metadata.labels?.[LABELS.inventory];
    if (cluster === undefined || !this.waiting.has(cluster)) return;
    let held = this.waiting.get(cluster);
    if (!held) this.waiting.set(cluster, (held = new Set(this.records.get(cluster)!.inventory)));
    if (!held.has(objectKey(o))) return;
    const objects = this.ahead.get(cluster);
    if (objects) objects.push(o);
    else this.ahead.set(cluster, [o]);
    this.held++;
    if (this.chunk.has(cluster)) this.heldForChunk++;
    if (this.held - this.heldForChunk > this.aheadMax) {
      this.fallBack(`more than ${this.aheadMax} objects were read ahead of their chunk`);
      throw new TooFarAhead();
    }
  };

  private fallBack(why: string): void {
    this.fellBack = why;
    this.ahead.clear();
    this.waiting.clear();
    this.held = 0;
    this.heldForChunk = 0;
  }
}

/**
 * The clusters in the order their objects come in a LIST from the store: by the namespace their record holds them in
 * (the repository's host namespace for a cluster without a record), then by name.
 */
export function inNamespaceOrder(
  clusters: readonly string[],
  namespaceOf: (cluster: string) => string | undefined,
): string[] {
  const keyed = clusters.map((c) => [`${namespaceOf(c) ?? ""}/`, c] as const);
  keyed.sort(([a, an], [b, bn]) => (a < b ? -1 : a > b ? 1 : an < bn ? -1 : an > bn ? 1 : 0));
  return keyed.map(([, c]) => c);
}
