// Child of test/cli/heap.scale.test.ts: holds about 40 MiB, then allocates chunks that live a while and are let go (as
// a streamed fleet does), and prints the largest heap V8 sized for it and what it held (argv[2] "bound": with the CLI's
// bound).
import v8 from "node:v8";
import { boundHeapGrowth } from "../../src/cli/heap.js";

const bound = process.argv[2] === "bound" ? boundHeapGrowth() : false;
const held: object[] = [];
for (let i = 0; i < 250_000; i++) held.push({ name: `object-${i}`, labels: { app: `a${i % 97}` }, ports: [i, i + 1] });
let maxTotal = 0;
let chunk: object[] = [];
for (let round = 0; round < 30; round++) {
  // A chunk lives across many young collections (it is promoted), then the next one replaces it.
  chunk = [];
  for (let i = 0; i < 60_000; i++)
    chunk.push({ kind: "VirtualService", spec: { hosts: [`h${round}-${i}`], http: [{ route: i }] } });
  maxTotal = Math.max(maxTotal, v8.getHeapStatistics().total_heap_size);
}
chunk = [];
(globalThis as { gc?: () => void }).gc?.();
const heldMiB = v8.getHeapStatistics().used_heap_size / 1048576;
process.stdout.write(`${JSON.stringify({ bound, heldMiB, maxTotalMiB: maxTotal / 1048576, kept: held.length })}\n`);
