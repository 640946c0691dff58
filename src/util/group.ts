// Grouping items by a key in one walk (Map.groupBy arrives with Node 21; vc runs on Node 20).

/** Items grouped by a key, each group in the items' order. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = out.get(key);
    if (group) group.push(item);
    else out.set(key, [item]);
  }
  return out;
}
