// A time-bounded cache of host answers whose concurrent misses share one in-flight load.

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
}

/**
 * Values are served while younger than `ttlMs`; a miss starts one load, and every request arriving
 * while it runs awaits the same promise. Failed loads are not cached: the next request tries again.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly stats?: CacheStats,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value of `key` when fresh, else the result of one shared `load()`. */
  get(key: string, load: () => Promise<V>): Promise<V> | V {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.loadedAt < this.ttlMs) {
      this.stats?.hit(key);
      return entry.value;
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      this.stats?.shared(key);
      return pending;
    }
    this.stats?.miss(key);
    const started = this.now();
    const promise = (async () => {
      try {
        const value = await load();
        this.entries.set(key, { value, loadedAt: started });
        return value;
      } finally {
        this.inFlight.delete(key);
      }
    })();
    this.inFlight.set(key, promise);
    return promise;
  }

  /** Drops every cached value (not the loads in flight). */
  clear(): void {
    this.entries.clear();
  }
}
