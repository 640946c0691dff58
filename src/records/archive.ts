// A cluster's longer history (pure): the reconciliations older than the status keeps, bounded by count and by bytes.
import { HISTORY_LIMIT, type Reconciliation } from "./status.js";

/** Reconciliations kept per cluster when no --history-limit is given: the status's 10 and 40 older ones. */
export const DEFAULT_HISTORY_LIMIT = 50;
/**
 * Most bytes the stored history array may take (UTF-8, as JSON). A ConfigMap holds at most 1 MiB of data; half of
 * it leaves room for the keys, metadata and managed fields, so the archive never nears the limit whatever the depth.
 */
export const HISTORY_BYTES = 512 * 1024;

/**
 * Entries the archive keeps for a history of `limit` reconciliations in all (the status holds the newest
 * HISTORY_LIMIT).
 */
export function archiveDepth(limit: number): number {
  return Math.max(0, limit - HISTORY_LIMIT);
}

const identity = (r: Reconciliation): string => `${r.time}\n${r.revision}\n${r.result}\n${r.via ?? ""}\n${r.by ?? ""}`;

/**
 * The lists joined in the order given (each newest first, newer lists first), each reconciliation once however often
 * it was stored. Never sorted by time: the reconciler and a person's vc apply run on different clocks.
 */
export function mergeEntries(...lists: ReadonlyArray<readonly Reconciliation[]>): Reconciliation[] {
  const seen = new Set<string>();
  const out: Reconciliation[] = [];
  for (const r of lists.flat()) {
    const key = identity(r);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}

/**
 * The archive after adding `spilled` to `stored`: newest first, at most `depth` entries, and the newest that fit in
 * `bytes` as a JSON array: the oldest are dropped first, by bytes as well as by count.
 */
export function nextArchive(
  stored: readonly Reconciliation[],
  spilled: readonly Reconciliation[],
  depth: number,
  bytes = HISTORY_BYTES,
): Reconciliation[] {
  const kept: Reconciliation[] = [];
  let size = 2; // "[]"
  for (const r of mergeEntries(spilled, stored)) {
    if (kept.length >= depth) break;
    const add = Buffer.byteLength(JSON.stringify(r), "utf8") + (kept.length > 0 ? 1 : 0);
    if (size + add > bytes) break;
    kept.push(r);
    size += add;
  }
  return kept;
}
