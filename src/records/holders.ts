// Within one repository, two folders claiming one host namespace: the cluster whose record holds it on the host stays
// valid, only the newcomer is refused.
import type { ClusterRecord } from "./record.js";

/** The contested clusters to admit: those whose record (this source's) holds the very namespace they claim. */
export function holdersOf<T extends { name: string; hostNamespace: string }>(
  contested: readonly T[],
  records: ReadonlyMap<string, ClusterRecord>,
): T[] {
  return contested.filter((c) => {
    const r = records.get(c.name);
    return (
      r !== undefined && r.hostNamespace === c.hostNamespace && r.inventory.includes(`Namespace//${c.hostNamespace}`)
    );
  });
}
