// Runs async work over items with at most `limit` in flight, keeping results in item order.

export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Loads each item in turn, one ahead of the caller: item k+1 is loading while the caller works on item k (a streamed
 * run renders its next chunk while the server applies the current one). A load that fails is thrown where the caller
 * reaches it; one loaded ahead of a caller that stopped is let go.
 */
export async function* loadAhead<T, R>(items: readonly T[], load: (item: T) => Promise<R>): AsyncGenerator<[T, R]> {
  const start = (i: number): Promise<R> | undefined => {
    if (i >= items.length) return undefined;
    const p = load(items[i]!);
    p.catch(() => undefined); // seen when awaited; unseen (and harmless) when the caller stopped first
    return p;
  };
  let next = start(0);
  for (let i = 0; i < items.length; i++) {
    const loaded = await next!;
    next = start(i + 1);
    yield [items[i]!, loaded];
  }
}

/** The items in runs of `size` (the last one shorter), in order. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
