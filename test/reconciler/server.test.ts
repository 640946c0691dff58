// The reconciler's HTTP server over real sockets: health, readiness, Prometheus metrics, the signed webhook.
import { expect } from "chai";
import { createMetrics } from "../../src/reconciler/metrics.js";
import { parseListen, startServer, WEBHOOK_PATH, type RunningServer } from "../../src/reconciler/server.js";
import { sign } from "../../src/reconciler/webhook.js";
import { silentLogger } from "../../src/model/log.js";

describe("reconciler: http server", () => {
  let srv: RunningServer;
  let ready = false;
  const pushes: Array<string | undefined> = [];
  const metrics = createMetrics({ defaults: false });

  before(async () => {
    srv = await startServer("127.0.0.1:0", {
      registry: metrics.registry,
      ready: () => ready,
      healthy: () => true,
      webhookSecret: "s3cret",
      ref: "main",
      onPush: (c) => pushes.push(c),
      logger: silentLogger,
    });
  });
  after(() => srv.close());

  it("answers /healthz, and /readyz only once ready", async () => {
    expect((await fetch(`${srv.url}/healthz`)).status).to.equal(200);
    expect((await fetch(`${srv.url}/readyz`)).status).to.equal(503);
    ready = true;
    expect((await fetch(`${srv.url}/readyz`)).status).to.equal(200);
    expect((await fetch(`${srv.url}/nope`)).status).to.equal(404);
  });

  it("serves the metrics in the Prometheus text format", async () => {
    metrics.reconcileDuration.observe({ result: "applied" }, 0.2);
    metrics.lastSuccess.set({ cluster: "alpha" }, 1700000000);
    metrics.objectsApplied.inc({ outcome: "created" }, 3);
    metrics.gitFetchDuration.observe({ result: "ok" }, 0.05);
    const res = await fetch(`${srv.url}/metrics`);
    const body = await res.text();
    expect(res.headers.get("content-type")).to.match(/text\/plain/);
    expect(body).to.include('vc_reconcile_duration_seconds_count{result="applied"} 1');
    expect(body).to.include('vc_cluster_last_success_timestamp_seconds{cluster="alpha"} 1700000000');
    expect(body).to.include('vc_objects_applied_total{outcome="created"} 3');
    expect(body).to.include('vc_git_fetch_duration_seconds_count{result="ok"} 1');
  });

  it("refuses a webhook with a bad signature and triggers on a good one", async () => {
    const body = JSON.stringify({ ref: "refs/heads/main", after: "deadbeef" });
    const bad = await fetch(`${srv.url}${WEBHOOK_PATH}`, {
      method: "POST",
      body,
      headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("wrong", body) },
    });
    expect(bad.status).to.equal(401);
    expect(pushes).to.deep.equal([]);
    const good = await fetch(`${srv.url}${WEBHOOK_PATH}`, {
      method: "POST",
      body,
      headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("s3cret", body) },
    });
    expect(good.status).to.equal(202);
    expect(pushes).to.deep.equal(["deadbeef"]);
  });

  it("parses listen addresses", () => {
    expect(parseListen(":8080")).to.deep.equal({ host: "0.0.0.0", port: 8080 });
    expect(parseListen("127.0.0.1:9")).to.deep.equal({ host: "127.0.0.1", port: 9 });
    expect(parseListen("[::1]:9")).to.deep.equal({ host: "::1", port: 9 });
    expect(() => parseListen("nope")).to.throw(/invalid listen/);
  });
});
