// The reconciler's fleet page, from the state it holds: its clusters' rows as vc list shapes them, the revision it
// follows, its passes, drift as of each cluster's last reconciliation; a change it reconciles is an event.
import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/model/log.js";
import { startReconciler, type Reconciler } from "../../src/reconciler/service.js";
import type { PassResult } from "../../src/reconciler/pass.js";

const ROOT = join(import.meta.dirname, "../..");

describe("reconciler: the fleet page on its listen port", () => {
  let dir: string;
  let r: Reconciler;
  const passes: Array<PassResult | { error: Error }> = [];
  const until = async (what: string, ok: () => boolean | Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 600 && !(await ok()); i++) await new Promise((res) => setTimeout(res, 50));
    if (!(await ok())) throw new Error(`waited for ${what}`);
  };
  const api = async <T>(path: string) => (await (await fetch(`${r.server!.url}${path}`)).json()) as T;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-fleet-page-"));
    for (const d of ["clusters", "fleet"]) cpSync(join(ROOT, d), join(dir, "repo", d), { recursive: true });
    r = await startReconciler({
      repo: join(dir, "repo"),
      branch: "main",
      target: `dir:${join(dir, "out")}`,
      cacheDir: join(dir, "cache"),
      intervalMs: 3_600_000,
      resyncMs: 3_600_000,
      listen: "127.0.0.1:0",
      leaderElect: false,
      allowMassPrune: false,
      logger: silentLogger,
      onPass: (e) => passes.push(e),
    });
    await until("the first pass", () => passes.length > 0);
  });
  after(async () => {
    await r?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists its clusters with the labels of their folders, applied and in sync, and its last pass", async () => {
    const page = await api<{ items: Array<{ name: string; drift: string; result: string; labels: object }> }>(
      "/api/v1/clusters",
    );
    expect(page.items.map((x) => [x.name, x.result, x.drift])).to.deep.equal([
      ["bookinfo", "applied", "no"],
      ["minimal", "applied", "no"],
      ["platform", "applied", "no"],
    ]);
    expect(page.items[2]!.labels).to.deep.equal({ tier: "prod", canary: "true" });
    const fleet = await api<{ served: { by: string }; progress: { lastPass: { clusters: number }; revision: string } }>(
      "/api/v1/fleet",
    );
    expect(fleet.served.by).to.equal("reconciler");
    expect(fleet.progress.lastPass.clusters).to.equal(3);
    expect(fleet.progress.revision).to.equal("local");
    const detail = await api<{ status: { history: unknown[] }; diff: { changes: unknown[] } }>(
      "/api/v1/clusters/minimal",
    );
    expect(detail.status.history).to.have.length(1);
    expect((await fetch(`${r.server!.url}/api/v1/clusters`, { method: "DELETE" })).status).to.equal(405);
    expect((await fetch(`${r.server!.url}/healthz`)).status).to.equal(200);
  });

  it("streams the row of a cluster it reconciled after a change", async () => {
    const ac = new AbortController();
    const res = await fetch(`${r.server!.url}/api/v1/events`, { signal: ac.signal });
    const reader = res.body!.getReader();
    let text = "";
    const read = (async () => {
      while (!/event: cluster\ndata: [^\n]*"name":"minimal"/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    })();
    writeFileSync(join(dir, "repo/clusters/minimal/values.yaml"), "controlPlane:\n  statefulSet:\n    replicas: 2\n");
    r.loop.trigger({ kind: "incremental", paths: ["clusters/minimal/values.yaml"] });
    await read;
    ac.abort();
    const row = /event: cluster\ndata: ([^\n]*"name":"minimal"[^\n]*)/.exec(text)![1]!;
    expect(JSON.parse(row)).to.deep.include({ type: "cluster" });
    const detail = await api<{ diff: { changes: Array<{ kind: string; change: string }> } }>(
      "/api/v1/clusters/minimal",
    );
    expect(detail.diff.changes.map((c) => c.kind)).to.include("StatefulSet");
  });
});
