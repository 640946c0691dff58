// Fault injection: fail, delay or reset the Nth matching request, or answer 429 with Retry-After.

export interface FaultSpec {
  method?: string;
  /** A string matches the path exactly or as a prefix ending at "/" ; a RegExp is tested against the path. */
  path?: string | RegExp;
  /** Fail the Nth matching request (1-based); with nth, `times` defaults to 1. */
  nth?: number;
  /** How many matching requests fail; default 1 with nth, unlimited without. */
  times?: number;
  status?: number;
  /** Destroy the socket instead of answering. */
  reset?: boolean;
  latencyMs?: number;
  retryAfterSeconds?: number;
  /** A body to answer instead of the Status object. */
  body?: string;
  /**
   * A `Warning` header (its text) added to the answer, as the API server warns of a deprecated API or a dropped field.
   */
  warning?: string;
}

export interface FaultHandle {
  remove(): void;
  /** How many requests matched so far. */
  readonly matched: number;
  /** How many requests the fault acted on. */
  readonly fired: number;
}

interface Fault {
  spec: FaultSpec;
  matched: number;
  fired: number;
}

export function pathMatches(pattern: string | RegExp | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  if (typeof pattern !== "string") return pattern.test(path);
  return path === pattern || path.startsWith(pattern.endsWith("/") ? pattern : `${pattern}/`);
}

export class Faults {
  private faults: Fault[] = [];

  add(spec: FaultSpec): FaultHandle {
    if (spec.nth !== undefined && (!Number.isInteger(spec.nth) || spec.nth < 1))
      throw new Error(`fault nth must be a positive integer, got ${spec.nth}`);
    if (spec.status === undefined && !spec.reset && spec.latencyMs === undefined && spec.warning === undefined)
      throw new Error("a fault needs status, reset, latencyMs or warning");
    const f: Fault = { spec, matched: 0, fired: 0 };
    this.faults.push(f);
    return {
      remove: () => {
        this.faults = this.faults.filter((x) => x !== f);
      },
      get matched() {
        return f.matched;
      },
      get fired() {
        return f.fired;
      },
    };
  }

  clear(): void {
    this.faults = [];
  }

  /** The faults that act on this request (counting it against every matching fault). */
  match(method: string, path: string): FaultSpec[] {
    const hits: FaultSpec[] = [];
    for (const f of this.faults) {
      if (f.spec.method && f.spec.method.toUpperCase() !== method.toUpperCase()) continue;
      if (!pathMatches(f.spec.path, path)) continue;
      f.matched++;
      const first = f.spec.nth ?? 1;
      const times = f.spec.times ?? (f.spec.nth !== undefined ? 1 : Infinity);
      if (f.matched >= first && f.matched < first + times) {
        f.fired++;
        hits.push(f.spec);
      }
    }
    return hits;
  }
}
