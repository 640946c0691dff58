// Fault injection and the request log: status on the Nth request, connection resets, latency, 429 with Retry-After,
// counts.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

const CMS = "/api/v1/namespaces/default/configmaps";

describe("kube-server: faults and request log", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer();
  });
  afterEach(async () => server.close());

  it("fails only the Nth matching request with the given status", async () => {
    server.faults.add({ method: "GET", path: CMS, nth: 2, status: 500 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(server, "GET", CMS)).status);
    expect(statuses).to.deep.equal([200, 500, 200, 200]);
    expect((await call(server, "POST", CMS, configMap("a"))).status).to.equal(201);
  });

  it("answers 429 with Retry-After and a Status carrying retryAfterSeconds, `times` times", async () => {
    const handle = server.faults.add({ path: /\/configmaps/, status: 429, retryAfterSeconds: 2, times: 2 });
    const first = await call(server, "GET", CMS);
    expect(first.status).to.equal(429);
    expect(first.headers.get("retry-after")).to.equal("2");
    expect(first.body).to.deep.include({ kind: "Status", reason: "TooManyRequests", code: 429 });
    expect(first.body.details).to.deep.equal({ retryAfterSeconds: 2 });
    expect((await call(server, "GET", CMS)).status).to.equal(429);
    expect((await call(server, "GET", CMS)).status).to.equal(200);
    expect(handle.fired).to.equal(2);
    expect(handle.matched).to.equal(3);
  });

  it("resets the connection, then serves again once the fault is removed", async () => {
    const handle = server.faults.add({ path: CMS, reset: true });
    let error: unknown;
    try {
      await call(server, "GET", CMS);
    } catch (err) {
      error = err;
    }
    expect(String((error as Error)?.message ?? error)).to.match(/fetch failed|socket|terminated/i);
    handle.remove();
    expect((await call(server, "GET", CMS)).status).to.equal(200);
  });

  it("delays matching requests by latencyMs", async () => {
    server.faults.add({ path: CMS, latencyMs: 150 });
    const t0 = Date.now();
    expect((await call(server, "GET", CMS)).status).to.equal(200);
    expect(Date.now() - t0).to.be.at.least(140);
    server.faults.clear();
  });

  it("logs every request with verb, resource, user and status, and counts by filter", async () => {
    server.resetRequests();
    await call(server, "POST", CMS, configMap("a"));
    await call(server, "GET", `${CMS}/a`);
    await call(server, "GET", `${CMS}?labelSelector=x%3Dy`);
    await call(server, "PATCH", `${CMS}/a`, { data: { k: "v" } }, { contentType: "application/merge-patch+json" });
    await call(server, "GET", `${CMS}/missing`);
    expect(server.requests.map((r) => `${r.method} ${r.verb} ${r.resource} ${r.status}`)).to.deep.equal([
      "POST create configmaps 201",
      "GET get configmaps 200",
      "GET list configmaps 200",
      "PATCH patch configmaps 200",
      "GET get configmaps 404",
    ]);
    expect(server.requests[2]!.query).to.equal("labelSelector=x%3Dy");
    expect(server.requests[0]!.user).to.equal("admin");
    expect(server.countRequests({ verb: "get" })).to.equal(2);
    expect(server.countRequests({ method: "get", path: CMS })).to.equal(3);
    expect(server.countRequests({ resource: "configmaps" })).to.equal(5);
    server.put(configMap("direct"));
    expect(server.countRequests()).to.equal(5);
  });

  it("answers a custom body when given, for the method it names only", async () => {
    server.faults.add({ method: "DELETE", status: 503, body: '{"custom":true}' });
    expect((await call(server, "GET", CMS)).status).to.equal(200);
    const r = await call(server, "DELETE", `${CMS}/x`);
    expect(r.status).to.equal(503);
    expect(r.body).to.deep.equal({ custom: true });
  });

  it("refuses a fault without an effect", () => {
    expect(() => server.faults.add({ path: CMS })).to.throw(/needs status, reset, latencyMs or warning/);
    expect(() => server.faults.add({ nth: 0, status: 500 })).to.throw(/positive integer/);
  });
});
