// A time-bounded cache of host answers whose concurrent misses share one in-flight load.

/** Reads of the cache, counted by the kind of key (the part before its first `:`). */
export interface CacheStats {
  /** Answered from a fresh entry. */
  hit(key: string): void;
  /** Started a host load. */
  miss(key: string): void;
  /** Joined a load already in flight. */
  shared(key: string): void;
}

interface Entry<V> {
  value: V;
  loadedAt: number;
  /** A background refresh was started for this value (one per value: a failed one is not retried). */
  refreshing?: boolean;
}

/**
 * Values are served while younger than `ttlMs`; a miss starts one load, and every request arriving
 * while it runs awaits the same promise. Failed loads are not cached: the next request tries again.
 * A value read after `refreshRatio` of its TTL starts one background load while it is still served, so a
 * steadily read key is renewed before it expires and readers do not wait for the host. At most `maxEntries`
 * values are kept: storing one more drops the oldest stored.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly stats?: CacheStats,
    private readonly now: () => number = Date.now,
    private readonly refreshRatio = 0.8,
    private readonly maxEntries = 100_000,
  ) {}

  /** The cached value of `key` while fresh, without loading or counting anything. */
  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    return entry && this.now() - entry.loadedAt < this.ttlMs ? entry.value : undefined;
  }

  /** The cached value of `key` when fresh, else the result of one shared `load()`. */
  get(key: string, load: () => Promise<V>): Promise<V> | V {
    const entry = this.entries.get(key);
    if (entry) {
      const age = this.now() - entry.loadedAt;
      if (age < this.ttlMs) {
        this.stats?.hit(kindOf(key));
        if (age >= this.ttlMs * this.refreshRatio && !entry.refreshing && !this.inFlight.has(key)) {
          entry.refreshing = true;
          this.start(key, load).catch(() => {}); // a failed refresh leaves the entry to expire
        }
        return entry.value;
      }
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      this.stats?.shared(kindOf(key));
      return pending;
    }
    this.stats?.miss(kindOf(key));
    return this.start(key, load);
  }

  private start(key: string, load: () => Promise<V>): Promise<V> {
    const started = this.now();
    const promise = (async () => {
      try {
        const value = await load();
        if (this.ttlMs > 0) {
          this.entries.delete(key);
          this.entries.set(key, { value, loadedAt: started });
          while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        }
        return value;
      } finally {
        this.inFlight.delete(key);
      }
    })();
    this.inFlight.set(key, promise);
    return promise;
  }

  /** Values stored (fresh or not). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every cached value (not the loads in flight). */
  clear(): void {
    this.entries.clear();
  }
}

/** The kind of a key: `pods` of `pods:ns/cluster`. */
function kindOf(key: string): string {
  const colon = key.indexOf(":");
  return colon < 0 ? key : key.slice(0, colon);
}
