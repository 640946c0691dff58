// Child of test/reconciler/watch-modes.test.ts: watches a fleet in "top" mode (under the heap limit its parent gives),
// prints the inotify watches it holds once ready, then the first batch of changed paths, and exits.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { FolderSource } from "../../src/reconciler/source.js";

/**
 * The inotify watches this process holds (Linux: one `inotify wd:` line per watch in the fdinfo of its inotify
 * descriptors).
 */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    let link = "";
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (link === "anon_inode:inotify")
      n += readFileSync(`/proc/self/fdinfo/${fd}`, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("inotify wd:")).length;
  }
  return n;
}

const repo = process.argv[2]!;
let stop: (() => Promise<void>) | undefined;
stop = await new FolderSource(repo).watch(
  (paths) => {
    process.stdout.write(`${JSON.stringify({ paths })}\n`);
    void stop?.();
  },
  50,
  "top",
);
process.stdout.write(
  `${JSON.stringify({ watches: inotifyWatches(), heapMiB: process.memoryUsage().heapUsed / 1048576 })}\n`,
);
