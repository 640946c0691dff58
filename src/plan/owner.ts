// Ownership of a cluster by one source (pure): the owner label on desired objects, the owners live objects carry, the
// conflict message.
import type { KubeObject } from "../kube/object.js";
import { LABELS } from "../translate/keys.js";

/** A copy of `obj` carrying the owner label `owner`. */
export function withOwner(obj: KubeObject, owner: string): KubeObject {
  if (obj.metadata.labels?.[LABELS.owner] === owner) return obj;
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, [LABELS.owner]: owner } } };
}

/** The owner label of an object, or undefined when it has none (applied before vc recorded owners, or by hand). */
export function ownerOf(obj: KubeObject): string | undefined {
  const v = obj.metadata.labels?.[LABELS.owner];
  return v === undefined || v === "" ? undefined : v;
}

/** The owners other than `owner` (and those being adopted from) that live objects carry, sorted. */
export function otherOwners(
  live: readonly KubeObject[],
  owner: string,
  adoptFrom: ReadonlySet<string> = new Set(),
): string[] {
  const others = new Set<string>();
  for (const o of live) {
    const w = ownerOf(o);
    if (w !== undefined && w !== owner && !adoptFrom.has(w)) others.add(w);
  }
  return [...others].sort();
}

/** Why nothing of a cluster another source owns is changed, and the way to hand it over. */
export function ownerConflictMessage(cluster: string, owner: string, others: readonly string[]): string {
  const labels = others.map((o) => `${LABELS.owner}=${o}`).join(", ");
  return (
    `cluster ${cluster} is owned by another source: its live objects carry ${labels} (this source is ${owner}); ` +
    `nothing of it is changed or pruned. ` +
    `To hand it over, run vc adopt ${cluster} --from ${others[0]} with this source (see docs/security-model.md)`
  );
}

/** Why prune keeps an object without an owner label. */
export const UNOWNED_KEPT =
  "no owner recorded on it (applied before vc recorded owners, or by hand): prune keeps it; vc adopt --from takes it";
