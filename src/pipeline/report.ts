// What a fleet's report keeps of each cluster once it is planned or applied: no objects, copies of the strings it
// shows.
import type { ObjectRef } from "../kube/object.js";
import { describeChange } from "../plan/fleet-summary.js";
import type { DiffSpill } from "../plan/spill.js";
import type { Plan, PlannedChange, SyncResult } from "../plan/types.js";

/** A plan as a report shows it: its counts, and its changes without the objects they were worked out from. */
export function forReport(plan: Plan, kept: KeptStrings, spill?: DiffSpill): Plan {
  // The fleet summary reads the changed fields from desired and live: worked out before they are let go.
  const changes = plan.changes
    .filter((c) => c.action !== "unchanged")
    .map((c) => {
      const { desired: _d, live: _l, ref, ...rest } = c;
      const change: PlannedChange = { ...rest, ref: kept.ref(ref), summary: kept.shared(describeChange(c)) };
      return spill ? spill.keep(change) : change;
    });
  return { ...plan, changes };
}

/**
 * The strings a report keeps of each change, as copies: an object's own may be slices of the text it was parsed from,
 * which a kept slice keeps whole; the ones that repeat (API versions, kinds, namespaces, summaries) kept once.
 */
export class KeptStrings {
  private readonly seen = new Map<string, string>();

  shared(s: string): string {
    let kept = this.seen.get(s);
    if (kept === undefined) {
      kept = copied(s);
      this.seen.set(kept, kept);
    }
    return kept;
  }

  ref(r: ObjectRef): ObjectRef {
    return {
      apiVersion: this.shared(r.apiVersion),
      kind: this.shared(r.kind),
      ...(r.namespace !== undefined ? { namespace: this.shared(r.namespace) } : {}),
      name: copied(r.name),
    };
  }
}

/** A string of its own (not a slice of a longer one). */
const copied = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

/**
 * A cluster's sync as a report keeps it once it is printed and recorded: no objects, and only the results that are not
 * unchanged.
 */
export function compact(s: SyncResult): SyncResult {
  const { changes: _changes, inventory: _inventory, ...plan } = s.plan;
  return { ...s, plan: { ...plan, changes: [] }, results: [] };
}
