// What validation says of a cluster rendered at a pinned base snapshot: its base files' errors name the snapshot
// (pure).
import { basename } from "node:path";
import type { ClusterResult } from "./result.js";

/**
 * Appends `(base <12 hex>)` to each diagnostic located in a fleet/ file of a cluster validated over the snapshot at
 * `baseRoot`.
 */
export function markPinned(result: ClusterResult, baseRoot: string): void {
  const tag = ` (base ${basename(baseRoot).slice(0, 12)})`;
  for (const d of result.diagnostics) if (d.file.startsWith("fleet/") && !d.message.endsWith(tag)) d.message += tag;
}
