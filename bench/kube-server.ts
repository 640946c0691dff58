// Benchmark of the Kubernetes API test server: load 100,000 objects, memory, and a label-selected LIST of 10,000 over
// HTTP.
import type { BenchContext } from "./run.js";
import { startKubeServer } from "../test/support/kube-server/index.js";

const TOTAL = 100_000;
const NAMESPACES = 100;

/** GET to the last byte (server work and transfer; the client's JSON parse is measured apart). */
async function fetchText(url: string, path: string): Promise<string> {
  const res = await fetch(url + path, { headers: { Authorization: "Bearer admin" } });
  return res.text();
}

async function list(url: string, path: string): Promise<number> {
  return (JSON.parse(await fetchText(url, path)) as { items: unknown[] }).items.length;
}

export async function run(ctx: BenchContext): Promise<void> {
  const server = await startKubeServer({ namespaces: Array.from({ length: NAMESPACES }, (_, i) => `ns-${i}`) });
  try {
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < TOTAL; i++) {
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: `cm-${i}`,
          namespace: `ns-${i % NAMESPACES}`,
          labels: { app: `app-${i % 10}`, shard: String(i % 7), "vc.orch.io/cluster": `c-${i % 50}` },
        },
        data: { key: `value-${i}`, other: "x".repeat(64) },
      });
    }
    const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
    global.gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    ctx.report("load 100,000 objects (in-process put)", loadMs, "ms");
    ctx.report(
      "heap for 100,000 objects",
      (heapAfter - heapBefore) / 1024 / 1024,
      "MiB",
      global.gc ? "after gc" : "run node with --expose-gc for a settled figure",
    );

    const path = "/api/v1/configmaps?labelSelector=app%3Dapp-3";
    const count = await list(server.url, path);
    if (count !== TOTAL / 10) throw new Error(`expected ${TOTAL / 10} items, got ${count}`);
    const warm = await ctx.median(9, () => fetchText(server.url, path));
    ctx.report("LIST 10,000 of 100,000 by label, median of 9", warm, "ms", "request to last byte");
    const text = await fetchText(server.url, path);
    ctx.report("  response size", text.length / 1024 / 1024, "MiB");
    const parse = await ctx.median(9, () => JSON.parse(text));
    ctx.report("  client JSON.parse of that response, median of 9", parse, "ms", "baseline: what any client pays");
    const setBased = await ctx.median(9, () =>
      fetchText(server.url, "/api/v1/configmaps?labelSelector=app%20in%20(app-3),shard!%3D99"),
    );
    ctx.report("LIST 10,000 of 100,000 by set-based selector, median of 9", setBased, "ms", "request to last byte");
    const ns = await ctx.median(7, () => list(server.url, "/api/v1/namespaces/ns-3/configmaps"));
    ctx.report("LIST one namespace (1,000 of 100,000), median of 7", ns, "ms");
    const paged = await ctx.median(5, async () => {
      let token = "";
      let n = 0;
      do {
        const res = await fetch(
          `${server.url}${path}&limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`,
        );
        const body = (await res.json()) as { items: unknown[]; metadata: { continue?: string } };
        n += body.items.length;
        token = body.metadata.continue ?? "";
      } while (token);
      if (n !== TOTAL / 10) throw new Error(`paged list returned ${n}`);
    });
    ctx.report("LIST 10,000 in pages of 500 (20 requests), median of 5", paged, "ms");
    const get = await ctx.median(201, () =>
      fetch(`${server.url}/api/v1/namespaces/ns-5/configmaps/cm-12345`).then((r) => r.text()),
    );
    ctx.report("GET one object among 100,000, median of 201", get, "ms");
    ctx.report("requests served", server.countRequests(), "requests");
  } finally {
    await server.close();
  }
}
