// The status the shared metrics proxy's replicas publish (each its own key of one ConfigMap), and what vc reads of it:
// which clusters the proxy answers for while their own per-cluster proxy still runs (the hand-over, docs/metrics-
// proxy.md).

/** What one replica says, as of `at`. */
export interface ReplicaStatus {
  /** When the replica wrote it (ISO 8601). */
  at: string;
  /** How often it writes, in seconds: a status older than three of these is stale. */
  intervalSeconds: number;
  /** Clusters (`<host namespace>/<name>`) it was told of, and those it answers for. */
  clusters: number;
  loaded: number;
  /**
   * Clusters whose own proxy Deployment still exists and that this replica answers for, with the Deployment quiet (it
   * no longer manages the APIService's caBundle) and the caBundle trusting this proxy: they may be handed over.
   */
  ready: string[];
  /** Clusters whose own proxy still exists and that may not be handed over yet, with why. */
  waiting: Record<string, string>;
  /** Clusters this replica cannot answer for, with why (at most MAX_FAILED of them). */
  failed: Record<string, string>;
  /** Host namespaces some of whose pods the index's bounds kept out, with how many. */
  overBound?: Record<string, number>;
}

/** Most failures one replica reports; the ConfigMap stays small at any fleet size. */
export const MAX_FAILED = 100;
/** Longest reason kept. */
export const MAX_REASON = 300;

/** A replica's status as the ConfigMap value it writes. */
export function formatReplicaStatus(status: ReplicaStatus): string {
  return JSON.stringify(status);
}

/**
 * A replica's status read back; undefined when the value is not one (a replica of another version, a damaged value).
 */
export function parseReplicaStatus(text: string | undefined): ReplicaStatus | undefined {
  if (!text) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const o = v as Partial<ReplicaStatus> | null;
  if (
    !o ||
    typeof o !== "object" ||
    typeof o.at !== "string" ||
    Number.isNaN(Date.parse(o.at)) ||
    typeof o.intervalSeconds !== "number" ||
    !Array.isArray(o.ready) ||
    !o.ready.every((x) => typeof x === "string")
  )
    return undefined;
  return {
    at: o.at,
    intervalSeconds: o.intervalSeconds,
    clusters: typeof o.clusters === "number" ? o.clusters : 0,
    loaded: typeof o.loaded === "number" ? o.loaded : 0,
    ready: o.ready,
    waiting: stringMap(o.waiting),
    failed: stringMap(o.failed),
  };
}

function stringMap(v: unknown): Record<string, string> {
  if (!v || typeof v !== "object" || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === "string")) as Record<string, string>;
}

/** Whether a replica's status is recent enough to count at `now`: written within three of its intervals. */
export function isFresh(status: ReplicaStatus, now: number): boolean {
  return now - Date.parse(status.at) <= 3 * status.intervalSeconds * 1000;
}

/** The replicas' fresh statuses of a ConfigMap's data. */
export function freshStatuses(data: Record<string, unknown> | undefined, now: number): ReplicaStatus[] {
  const out: ReplicaStatus[] = [];
  for (const v of Object.values(data ?? {})) {
    const s = parseReplicaStatus(typeof v === "string" ? v : undefined);
    if (s && isFresh(s, now)) out.push(s);
  }
  return out;
}

/**
 * The clusters the shared proxy is ready to take over from their own proxy: those every fresh replica lists as ready
 * (a replica that is not ready for one would answer its requests with 401). None when no replica is fresh.
 */
export function readyClusters(statuses: readonly ReplicaStatus[]): Set<string> {
  if (statuses.length === 0) return new Set();
  const [first, ...rest] = statuses;
  return new Set(first!.ready.filter((c) => rest.every((s) => s.ready.includes(c))));
}
