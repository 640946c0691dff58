// The in-memory object store: objects indexed by kind and namespace, a global resourceVersion, watch history and owner
// index.
import type { KubeObject } from "../../../src/kube/object.js";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** A stored object. `obj` is never mutated after commit; `json` caches its serialisation. */
export interface Entry {
  kindKey: string;
  obj: KubeObject;
  json?: string;
}

export interface StoreEvent {
  rv: number;
  type: EventType;
  kindKey: string;
  obj: KubeObject;
  /** The object before a MODIFIED event. */
  old?: KubeObject;
}

/** Watch history kept by default: at least this many events (older ones are dropped in batches). */
const DEFAULT_HISTORY = 20_000;

export function jsonOf(e: Entry): string {
  if (e.json === undefined) e.json = JSON.stringify(e.obj);
  return e.json;
}

function refKey(kindKey: string, ns: string, name: string): string {
  return `${kindKey}\u0000${ns}\u0000${name}`;
}

export class Store {
  constructor(private readonly historySize = DEFAULT_HISTORY) {}

  private rv = 0;
  private readonly kinds = new Map<string, Map<string, Map<string, Entry>>>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(ev: StoreEvent) => void>();
  /** owner uid -> dependents (refKey) */
  private readonly owners = new Map<string, Set<string>>();
  /** Sorted entries per kind and scope, dropped whenever the kind changes. */
  private readonly sortedCache = new Map<string, Map<string, Entry[]>>();

  get resourceVersion(): number {
    return this.rv;
  }

  /** The lowest resourceVersion a watch can still start from (older ones get 410 Gone). */
  get oldestWatchable(): number {
    return this.history.length === 0 ? this.rv : this.history[0]!.rv - 1;
  }

  nextResourceVersion(): number {
    return ++this.rv;
  }

  get(kindKey: string, ns: string, name: string): Entry | undefined {
    return this.kinds.get(kindKey)?.get(ns)?.get(name);
  }

  /** Entries of a kind, in one namespace or all; unsorted. */
  *entries(kindKey: string, ns?: string): Iterable<Entry> {
    const byNs = this.kinds.get(kindKey);
    if (!byNs) return;
    if (ns !== undefined) {
      const m = byNs.get(ns);
      if (m) yield* m.values();
      return;
    }
    for (const m of byNs.values()) yield* m.values();
  }

  /**
   * Entries of a kind, in one namespace or all, sorted by namespace/name (cached until the kind changes; do not
   * mutate).
   */
  sorted(kindKey: string, ns?: string): readonly Entry[] {
    let byScope = this.sortedCache.get(kindKey);
    if (!byScope) this.sortedCache.set(kindKey, (byScope = new Map()));
    const scope = ns ?? "\u0000all";
    let list = byScope.get(scope);
    if (!list) {
      const keyed = [...this.entries(kindKey, ns)].map(
        (e) => [`${e.obj.metadata.namespace ?? ""}/${e.obj.metadata.name}`, e] as const,
      );
      keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      list = keyed.map(([, e]) => e);
      byScope.set(scope, list);
    }
    return list;
  }

  count(kindKey: string, ns?: string): number {
    const byNs = this.kinds.get(kindKey);
    if (!byNs) return 0;
    if (ns !== undefined) return byNs.get(ns)?.size ?? 0;
    let n = 0;
    for (const m of byNs.values()) n += m.size;
    return n;
  }

  kindKeys(): string[] {
    return [...this.kinds.keys()];
  }

  /** Stores (ADDED/MODIFIED) or removes (DELETED) an object, stamping a new resourceVersion, and notifies watchers. */
  commit(kindKey: string, type: EventType, obj: KubeObject): Entry {
    const ns = obj.metadata.namespace ?? "";
    const name = obj.metadata.name;
    const rv = this.nextResourceVersion();
    obj.metadata.resourceVersion = String(rv);
    let byNs = this.kinds.get(kindKey);
    if (!byNs) this.kinds.set(kindKey, (byNs = new Map()));
    let byName = byNs.get(ns);
    if (!byName) byNs.set(ns, (byName = new Map()));
    const previous = byName.get(name);
    if (previous) this.unindexOwners(kindKey, previous.obj);
    const entry: Entry = { kindKey, obj };
    this.sortedCache.delete(kindKey);
    if (type === "DELETED") {
      byName.delete(name);
      if (byName.size === 0) byNs.delete(ns);
    } else {
      byName.set(name, entry);
      this.indexOwners(kindKey, obj);
    }
    const ev: StoreEvent = { rv, type, kindKey, obj };
    if (type === "MODIFIED" && previous) ev.old = previous.obj;
    this.history.push(ev);
    // Trim in batches: dropping one event per commit would shift the whole array every time.
    if (this.history.length > Math.ceil(this.historySize * 1.5))
      this.history.splice(0, this.history.length - this.historySize);
    for (const l of this.listeners) l(ev);
    return entry;
  }

  /** Events after resourceVersion `since`, or undefined when history no longer reaches back that far. */
  eventsSince(since: number): StoreEvent[] | undefined {
    if (since < this.oldestWatchable) return undefined;
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid]!.rv <= since) lo = mid + 1;
      else hi = mid;
    }
    return this.history.slice(lo);
  }

  subscribe(fn: (ev: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** [kindKey, namespace, name] of objects whose ownerReferences name this uid. */
  dependents(uid: string): Array<[string, string, string]> {
    return [...(this.owners.get(uid) ?? [])].map((k) => k.split("\u0000") as [string, string, string]);
  }

  private indexOwners(kindKey: string, obj: KubeObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      let set = this.owners.get(ref.uid);
      if (!set) this.owners.set(ref.uid, (set = new Set()));
      set.add(refKey(kindKey, obj.metadata.namespace ?? "", obj.metadata.name));
    }
  }

  private unindexOwners(kindKey: string, obj: KubeObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const set = this.owners.get(ref.uid);
      if (!set) continue;
      set.delete(refKey(kindKey, obj.metadata.namespace ?? "", obj.metadata.name));
      if (set.size === 0) this.owners.delete(ref.uid);
    }
  }
}
