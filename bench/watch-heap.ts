// Child of bench/scale.ts: the JS heap the folder watcher holds on a fleet, in one mode (node --expose-gc).
// Prints `{"mode":..., "heapMiB":..., "rssMiB":...}`: heap and RSS once the watch is ready, less those before it.
import { FolderSource, type WatchMode } from "../src/reconciler/source.js";

const [repo, mode] = process.argv.slice(2) as [string, WatchMode];
const gc = (globalThis as { gc?: () => void }).gc!;
gc();
const before = process.memoryUsage();
const stop = await new FolderSource(repo).watch(() => undefined, 300, mode);
gc();
const after = process.memoryUsage();
process.stdout.write(
  `${JSON.stringify({ mode, heapMiB: (after.heapUsed - before.heapUsed) / 1048576, rssMiB: (after.rss - before.rss) / 1048576 })}\n`,
);
await stop();
