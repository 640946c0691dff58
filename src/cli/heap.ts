// How far the CLI's JS heap grows past what it holds: twice what survives a collection, unless a heap flag says
// otherwise.
import v8 from "node:v8";

/**
 * Percent by which V8 grows the old generation past what survives a full collection. Without a heap limit V8 sizes a
 * heap for the whole machine and grows it up to four times the live data when the program allocates fast, as a
 * streamed fleet does (each chunk is loaded, rendered, planned and let go): a no-op `vc diff` of 10,000 clusters held
 * about 45 MiB and peaked at 327 MiB of resident memory; with 100 it peaked at 237 MiB (docs/scale.md).
 */
export const HEAP_GROWING_PERCENT = 100;

/** V8 flags that size the old generation: given one (the Deployment's NODE_OPTIONS, a user's), V8 is left as told. */
const HEAP_FLAGS = /--(max[-_]old[-_]space[-_]size|max[-_]heap[-_]size|heap[-_]growing[-_]percent)\b/;

/** Whether the process was started with a flag that sizes its heap (in its arguments or NODE_OPTIONS). */
export function heapFlagsGiven(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? "",
): boolean {
  return [...execArgv, nodeOptions].some((a) => HEAP_FLAGS.test(a));
}

/**
 * Grows the heap by HEAP_GROWING_PERCENT when no heap flag was given. V8 reads this flag each time it sets the next
 * collection's limit, so it holds from the next full collection on. Returns whether it was set.
 */
export function boundHeapGrowth(): boolean {
  if (heapFlagsGiven()) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
