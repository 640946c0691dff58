// Loaded with `node --import` into a benchmarked child: on exit, writes its own peak RSS and CPU to
// $VC_BENCH_USAGE_FILE.
import { writeFileSync } from "node:fs";

const out = process.env.VC_BENCH_USAGE_FILE;
if (out) {
  process.on("exit", () => {
    const u = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ maxRssKiB: u.maxRSS, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
  });
}
