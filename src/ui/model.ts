// The fleet page's model: what a fleet source gives (rows, progress, rollout), and the API's queries over it (pure).
import { labelMatcher, SelectorError } from "../kube/selector.js";
import type { ObjectHealth } from "../model/health.js";
import type { ClusterStatus } from "../records/status.js";
import type { RolloutView } from "../rollout/view.js";
import type { ListRow } from "../ops/list.js";

/** What the fleet follows and where the reconciler is. */
export interface FleetProgress {
  /** The revision followed and when it was fetched (ISO 8601). */
  revision?: string;
  fetchedAt?: string;
  /** The pass in flight: its kind, since when, and how many clusters it has settled. */
  pass?: { kind: "full" | "incremental"; since: string; settled: number };
  /** What waits for the next pass: a full resync, changed paths, clusters to retry. */
  queue: { full: boolean; changes: string[]; retry: string[] };
  /** The last pass that ended. */
  lastPass?: { kind: "full" | "incremental"; revision: string; ended: string; clusters: number; problems: number };
  /** The last failed attempt, when the newest attempt failed. */
  error?: string;
}

/** The fleet view's header: where the data comes from, counts by health and result, progress, the rollout in short. */
export interface FleetSummary {
  /** Who serves the data: `vc ui` (its target) or the reconciler. */
  served: { by: "vc ui" | "reconciler"; target: string; repository?: string };
  clusters: number;
  health: Record<string, number>;
  result: Record<string, number>;
  drift: Record<string, number>;
  progress?: FleetProgress;
  rollout?: { id: string; phase: string; wave: RolloutView["wave"]; message: string };
  /** When the data was last read (ISO 8601), and what could not be read. */
  updated: string;
  notes: string[];
}

/** A change of the last plan, in summary: the object and what changes (masked as `vc diff` masks). */
interface ChangeSummary {
  action: string;
  kind: string;
  namespace?: string;
  name: string;
  change: string;
}

/** The cluster view: its row, its status with history, its objects' health, the last plan in summary, its commits. */
export interface ClusterDetail {
  cluster: ListRow;
  /** As `vc status --cluster NAME -o json` prints it. */
  status?: ClusterStatus;
  /** Each object with its health, when it was read. */
  objects?: ObjectHealth[];
  /** Why the objects' health is not shown. */
  objectsNote?: string;
  /** The last plan of the cluster in summary: its changed objects; when it was made. */
  diff?: { at: string; changes: ChangeSummary[]; blocked?: string };
  /** Subject and author of each revision in the history, by revision. */
  commits: Record<string, { subject: string; author: string; time: string }>;
}

/** An event of the stream: a cluster's row changed or went, or the fleet's summary changed. */
export type FleetEvent =
  | { type: "cluster"; row: ListRow }
  | { type: "removed"; name: string }
  | { type: "fleet"; summary: FleetSummary };

/** Where the page's data comes from: `vc ui`'s reads of a target, or the reconciler's state. */
export interface FleetProvider {
  /** The rows, sorted by name (the same array while nothing changed). */
  rows(): readonly ListRow[];
  summary(): FleetSummary;
  rollout(): RolloutView | undefined;
  cluster(name: string): Promise<ClusterDetail | undefined>;
  /** vc doctor's findings of one cluster; undefined where the source cannot run it. */
  doctor?(name: string): Promise<unknown>;
  /** Calls `listener` with each event; returns how to stop. */
  subscribe(listener: (e: FleetEvent) => void): () => void;
}

/** Summary counts of rows. */
export function countRows(rows: readonly ListRow[]): Pick<FleetSummary, "clusters" | "health" | "result" | "drift"> {
  const health: Record<string, number> = { Healthy: 0, Progressing: 0, Degraded: 0, Unknown: 0 };
  const result: Record<string, number> = {};
  const drift: Record<string, number> = {};
  for (const r of rows) {
    health[r.health] = (health[r.health] ?? 0) + 1;
    const res = r.result ?? "none";
    result[res] = (result[res] ?? 0) + 1;
    drift[r.drift] = (drift[r.drift] ?? 0) + 1;
  }
  return { clusters: rows.length, health, result, drift };
}

/** The query of `GET /api/v1/clusters`. */
export interface ClusterQuery {
  /** Text found (case-insensitive) in the name, namespace, labels, health reason, revision, commit or who applied. */
  q?: string;
  /** A label selector (`tier=prod,canary`). */
  label?: string;
  health?: string[];
  result?: string[];
  drift?: string[];
  /** Clusters in this wave of the rollout. */
  wave?: string;
  /** Clusters whose applied revision starts with this. */
  revision?: string;
  sort: SortKey;
  order: "asc" | "desc";
  limit: number;
  cursor?: string;
}

const SORT_KEYS = ["name", "namespace", "health", "result", "drift", "applied", "wave"] as const;
type SortKey = (typeof SORT_KEYS)[number];

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

/** A query that cannot be answered: 400 with this message. */
export class QueryError extends Error {}

const list = (v: string | null): string[] | undefined =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** Reads the query string of `GET /api/v1/clusters`; throws QueryError on a bad one. */
export function parseQuery(params: URLSearchParams): ClusterQuery {
  const sort = (params.get("sort") ?? "name") as SortKey;
  if (!SORT_KEYS.includes(sort)) throw new QueryError(`unknown sort "${sort}": use one of ${SORT_KEYS.join(", ")}`);
  const order = params.get("order") ?? "asc";
  if (order !== "asc" && order !== "desc") throw new QueryError(`unknown order "${order}": use asc or desc`);
  const limitText = params.get("limit");
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new QueryError(`invalid limit "${limitText}": use 1 to ${MAX_LIMIT}`);
  const q: ClusterQuery = { sort, order, limit };
  const text = params.get("q")?.trim();
  if (text) q.q = text;
  for (const k of ["label", "wave", "revision", "cursor"] as const) {
    const v = params.get(k)?.trim();
    if (v) q[k] = v;
  }
  for (const k of ["health", "result", "drift"] as const) {
    const v = list(params.get(k));
    if (v?.length) q[k] = v;
  }
  return q;
}

const HEALTH_ORDER: Record<string, number> = { Degraded: 0, Unknown: 1, Progressing: 2, Healthy: 3 };

/** The value a row sorts by: worst health first, newest apply first when descending. */
function sortValue(r: ListRow, key: SortKey): string {
  switch (key) {
    case "name":
      return r.name;
    case "namespace":
      return r.namespace;
    case "health":
      return String(HEALTH_ORDER[r.health] ?? 9);
    case "result":
      return r.result ?? "~";
    case "drift":
      return r.drift === "yes" ? `0${String(999_999 - (r.driftObjects ?? 0)).padStart(6, "0")}` : `1${r.drift}`;
    case "applied":
      return r.lastAppliedTime ?? "";
    case "wave":
      return r.wave ? String(r.wave.index).padStart(6, "0") : "~";
  }
}

/** The text each row is searched by, kept while the row is (a provider replaces a row that changes). */
const haystacks = new WeakMap<ListRow, string>();

/** The text a row is searched by: name, namespace, labels, reason, revision, who applied it, commit, note. */
function haystack(r: ListRow): string {
  let text = haystacks.get(r);
  if (text === undefined) {
    text = [
      r.name,
      r.namespace,
      ...Object.entries(r.labels).map(([k, v]) => `${k}=${v}`),
      r.healthReason ?? "",
      r.lastAppliedRevision ?? "",
      r.lastAppliedBy ?? "",
      r.commit?.subject ?? "",
      r.commit?.author ?? "",
      r.note ?? "",
    ]
      .join("\n")
      .toLowerCase();
    haystacks.set(r, text);
  }
  return text;
}

export interface ClusterPage {
  items: ListRow[];
  /** Clusters the filter matched (all pages). */
  matched: number;
  total: number;
  /** The cursor of the next page; absent on the last. */
  next?: string;
}

const encodeCursor = (key: [string, string]): string => Buffer.from(JSON.stringify(key)).toString("base64url");

function decodeCursor(cursor: string): [string, string] {
  try {
    const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(key) && key.length === 2 && key.every((k) => typeof k === "string"))
      return key as [string, string];
  } catch {
    // below
  }
  throw new QueryError("invalid cursor: pass the `next` of the previous page as it was given");
}

/**
 * One page of the rows a query matches (`rows` sorted by name), sorted by its key then name; the cursor names the last
 * row's key, so a page after a change of the fleet starts where the previous one ended (keyset paging).
 */
export function queryRows(rows: readonly ListRow[], q: ClusterQuery): ClusterPage {
  let matchLabels: ((labels: Record<string, string>) => boolean) | undefined;
  try {
    matchLabels = q.label ? labelMatcher(q.label) : undefined;
  } catch (err) {
    if (err instanceof SelectorError) throw new QueryError(`invalid label selector: ${err.message}`);
    throw err;
  }
  const text = q.q?.toLowerCase();
  const matched = rows.filter(
    (r) =>
      (!q.health || q.health.includes(r.health)) &&
      (!q.result || q.result.includes(r.result ?? "none")) &&
      (!q.drift || q.drift.includes(r.drift)) &&
      (!q.wave || r.wave?.name === q.wave) &&
      (!q.revision || (r.lastAppliedRevision ?? "").startsWith(q.revision)) &&
      (!matchLabels || matchLabels(r.labels)) &&
      (!text || haystack(r).includes(text)),
  );
  const sign = q.order === "desc" ? -1 : 1;
  const keyed = matched.map((r) => ({ r, k: q.sort === "name" ? r.name : sortValue(r, q.sort) }));
  const cmp = (ak: string, an: string, bk: string, bn: string): number =>
    sign * (ak < bk ? -1 : ak > bk ? 1 : 0) || (an < bn ? -1 : an > bn ? 1 : 0);
  // The rows come sorted by name: by name ascending there is nothing to sort.
  if (q.sort !== "name" || q.order === "desc") keyed.sort((a, b) => cmp(a.k, a.r.name, b.k, b.r.name));
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const start = after ? keyed.findIndex((x) => cmp(x.k, x.r.name, after[0], after[1]) > 0) : 0;
  const from = start < 0 ? keyed.length : start;
  const page = keyed.slice(from, from + q.limit);
  const last = page.at(-1);
  return {
    items: page.map((x) => x.r),
    matched: matched.length,
    total: rows.length,
    ...(last && from + q.limit < keyed.length ? { next: encodeCursor([last.k, last.r.name]) } : {}),
  };
}
