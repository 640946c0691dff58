// What a change does across the fleet, before the per-cluster detail: clusters grouped by the same change (kinds and
// fields), "changes 412 clusters: 410 × update StatefulSet spec.template.spec.containers[].image, 2 × …" (pure).
import { isMapping } from "../repo/merge.js";
import { PREFIX } from "../translate/keys.js";
import { managedView, normalizeDesired } from "./normalize.js";
import type { Plan, PlannedChange } from "./types.js";

interface ChangeGroup {
  /** What the clusters of the group change, the same in each: `update StatefulSet spec.replicas; create ConfigMap`. */
  change: string;
  clusters: string[];
}

export interface FleetSummary {
  /** Clusters whose plan changes something. */
  changed: number;
  /** Largest group first, then by change. */
  groups: ChangeGroup[];
}

/** Fields at most listed per object before `…`. */
const MAX_FIELDS = 4;

const KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const step = (path: string, key: string) =>
  KEY.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;

/**
 * Leaf paths where `want` differs from `have`, over the fields `want` sets; list items as `[]`. vc's own labels and
 * annotations (revision, source, config hash) are left out.
 */
function changedPaths(want: unknown, have: unknown, path: string, out: Set<string>): void {
  if (isMapping(want) && isMapping(have)) {
    for (const k of Object.keys(want)) {
      if ((path.endsWith("annotations") || path.endsWith("labels")) && k.startsWith(`${PREFIX}/`)) continue;
      changedPaths(want[k], have[k], step(path, k), out);
    }
    return;
  }
  if (Array.isArray(want) && Array.isArray(have) && want.length === have.length) {
    for (let i = 0; i < want.length; i++) changedPaths(want[i], have[i], `${path}[]`, out);
    return;
  }
  if (JSON.stringify(want) !== JSON.stringify(have)) out.add(path || "(whole object)");
}

/** The change in a few words: its action and kind, and for an update the fields it changes. */
export function describeChange(c: PlannedChange): string {
  if (c.summary !== undefined) return c.summary;
  if (c.action !== "update" || !c.desired || !c.live) return `${c.action} ${c.ref.kind}`;
  const want = normalizeDesired(c.desired);
  const fields = new Set<string>();
  changedPaths(want, managedView(c.live, want, { normalized: true }), "", fields);
  const list = [...fields].sort();
  if (list.length === 0) return `update ${c.ref.kind} (${PREFIX} metadata only)`;
  return (
    `update ${c.ref.kind} ` +
    `${list.slice(0, MAX_FIELDS).join(", ")}${list.length > MAX_FIELDS ? `, … (${list.length} fields)` : ""}`
  );
}

/** The fleet's plans grouped by what they change. */
export function summariseFleet(plans: readonly Plan[]): FleetSummary {
  const groups = new Map<string, string[]>();
  let changed = 0;
  for (const p of plans) {
    const changes = p.changes.filter((c) => c.action !== "unchanged");
    if (changes.length === 0) continue;
    changed++;
    const what = [...new Set(changes.map(describeChange))].sort().join("; ");
    const key = p.blocked ? `blocked: ${what}` : what;
    groups.set(key, [...(groups.get(key) ?? []), p.cluster]);
  }
  const out = [...groups].map(([change, clusters]) => ({ change, clusters: clusters.sort() }));
  out.sort((a, b) => b.clusters.length - a.clusters.length || (a.change < b.change ? -1 : a.change > b.change ? 1 : 0));
  return { changed, groups: out };
}

/**
 * `changes 412 clusters: 410 × <change>, 2 × <change>`; undefined unless two or more clusters change (a fleet-wide
 * change).
 */
export function fleetSummaryLine(s: FleetSummary): string | undefined {
  if (s.changed < 2) return undefined;
  return `changes ${s.changed} clusters: ${s.groups.map((g) => `${g.clusters.length} × ${g.change}`).join(", ")}`;
}
