// One reading of a request path for authorization and routing (issue: the proxy authorized the raw path and served the
// decoded one, so `p%6Fds` read pod metrics as a non-resource path), and authorization bounded in time and queue when
// the virtual API server stalls: 503 with Retry-After when it cannot decide, 403 only for a real denial.
import { expect } from "chai";
import fc from "fast-check";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { requestAttributes, SubjectAccessReviewer } from "../../src/metrics-proxy/authorizer.js";
import { HostClient } from "../../src/metrics-proxy/host-client.js";
import { parseRequestPath } from "../../src/metrics-proxy/request-path.js";
import { route, type RouterContext } from "../../src/metrics-proxy/router.js";
import { requestHandler } from "../../src/metrics-proxy/server.js";
import { ApiError } from "../../src/metrics-proxy/status.js";
import { VirtualCluster } from "../../src/metrics-proxy/virtual-cluster.js";
import { ProxyMetrics } from "../../src/metrics-proxy/metrics.js";
import { silentLogger } from "../../src/model/log.js";

const GROUP = "metrics.orch.io";
const ctx = { apiGroup: GROUP, serverAddress: "127.0.0.1:1" } as unknown as RouterContext;
const scope = { name: "a", hostNamespace: "vc-a", nodes: "synced" } as const;

describe("metrics proxy: one parser for authorization and routing", () => {
  it("reads an encoded resource name as that resource for both (`p%6Fds` is pods, not a non-resource path)", () => {
    for (const path of [
      `/apis/${GROUP}/v1beta1/namespaces/a/p%6Fds`,
      `/apis/${GROUP}/v1beta1/namespaces/a/%70%6f%64%73`,
      `/apis/${GROUP}/v1beta1/namespaces/a/pods/`,
    ]) {
      const parsed = parseRequestPath(path);
      expect(parsed.path).to.equal(`/apis/${GROUP}/v1beta1/namespaces/a/pods`);
      expect(requestAttributes(parsed, GROUP)).to.deep.equal({
        kind: "resource",
        verb: "list",
        group: GROUP,
        version: "v1beta1",
        resource: "pods",
        namespace: "a",
      });
      expect(route(ctx, scope, parsed, new URLSearchParams())).to.include({
        verb: "LIST",
        resource: "pods",
        group: GROUP,
      });
    }
    expect(requestAttributes(`/api/v1/namespaces/a/p%6fds/x`, GROUP)).to.include({
      kind: "resource",
      resource: "pods",
      name: "x",
    });
  });

  it(
    "refuses ambiguous forms with 400: encoded slashes, dot segments, empty segments, double encoding, control " +
      "characters, bad escapes",
    () => {
      for (const path of [
        `/apis/${GROUP}/v1beta1/namespaces%2Fa/pods`,
        `/apis/${GROUP}/v1beta1/namespaces/a%2fb/pods`,
        `/apis/${GROUP}/v1beta1/namespaces/a%5Cb/pods`,
        `/apis/${GROUP}/v1beta1/nodes/../namespaces/a/pods`,
        `/apis/${GROUP}/v1beta1/%2e%2e/pods`,
        `/apis/${GROUP}/v1beta1/./pods`,
        `/apis/${GROUP}//v1beta1/pods`,
        `/apis/${GROUP}/v1beta1/p%256Fds`,
        `/apis/${GROUP}/v1beta1/pods%00`,
        `/apis/${GROUP}/v1beta1/p%zzods`,
        "apis",
      ]) {
        let err: unknown;
        try {
          parseRequestPath(path);
        } catch (e) {
          err = e;
        }
        expect(err, path).to.be.instanceOf(ApiError);
        expect((err as ApiError).code, path).to.equal(400);
        expect(() => requestAttributes(path, GROUP), path).to.throw(ApiError);
        expect(() => route(ctx, scope, path, new URLSearchParams()), path).to.throw(ApiError);
      }
    },
  );

  it("any percent-encoding of an accepted path is authorized and routed as the plain path (property)", () => {
    const segment = fc.constantFrom(
      "apis",
      GROUP,
      "v1beta1",
      "namespaces",
      "default",
      "pods",
      "nodes",
      "n1",
      "api",
      "v1",
      "p-0",
    );
    const encodeSome = (s: string, mask: number[]) =>
      [...s]
        .map((c, i) => (mask[i % mask.length]! % 3 === 0 ? `%${c.charCodeAt(0).toString(16).padStart(2, "0")}` : c))
        .join("");
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 7 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 8 }),
        (segments, mask) => {
          const plain = `/${segments.join("/")}`;
          const encoded = `/${segments.map((s) => encodeSome(s, mask)).join("/")}`;
          const a = parseRequestPath(plain);
          const b = parseRequestPath(encoded);
          expect(b).to.deep.equal(a);
          expect(requestAttributes(b, GROUP)).to.deep.equal(requestAttributes(plain, GROUP));
          const routed = (p: string) => {
            try {
              const r = route(ctx, scope, p, new URLSearchParams());
              return { verb: r.verb, group: r.group, resource: r.resource };
            } catch (e) {
              return (e as ApiError).code;
            }
          };
          expect(routed(encoded)).to.deep.equal(routed(plain));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("metrics proxy: authorization bounded when the virtual API server stalls", function () {
  this.timeout(20_000);
  /** A real HTTP server playing the virtual API server's SubjectAccessReview endpoint: it stalls, fails or decides. */
  let mode: "stall" | "fail" | "allow" | "deny" = "stall";
  let server: Server;
  let stalled: ServerResponse[] = [];
  let received = 0;
  let client: HostClient;
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      received++;
      req.resume();
      if (mode === "stall") return void stalled.push(res);
      if (mode === "fail")
        return void res.writeHead(500, { "Content-Type": "application/json" }).end('{"kind":"Status","code":500}');
      const status = mode === "allow" ? { allowed: true } : { allowed: false, reason: "no RBAC" };
      res
        .writeHead(201, { "Content-Type": "application/json" })
        .end(JSON.stringify({ kind: "SubjectAccessReview", apiVersion: "authorization.k8s.io/v1", status }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    client = new HostClient({ server: new URL(`http://127.0.0.1:${port}`), tls: {}, headers: async () => ({}) });
  });
  afterEach(() => {
    for (const res of stalled.splice(0)) res.destroy();
    stalled = [];
  });
  after(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const reviewer = (opts: { timeoutMs: number; maxInFlight: number; maxQueued: number }) =>
    new SubjectAccessReviewer(new VirtualCluster(client, { log: silentLogger }).review, { ttlMs: 60_000, ...opts });
  const user = (name: string) => ({ name, groups: ["system:authenticated"], extra: {} });
  const attrs = requestAttributes(`/apis/${GROUP}/v1beta1/namespaces/a/pods`, GROUP);

  // Deadlines are generous: a server that answers must be answered within them however busy the machine is; the
  // stalled one never answers, so the deadline is what ends its review whatever its length.
  it("past its deadline a review is undecided (not a denial), and is not cached", async () => {
    mode = "stall";
    const r = reviewer({ timeoutMs: 3_000, maxInFlight: 4, maxQueued: 4 });
    const d = await r.authorize(user("alice"), attrs);
    expect(d).to.include({ allowed: false, undecided: true });
    mode = "allow";
    expect(await r.authorize(user("alice"), attrs)).to.deep.equal({ allowed: true, reason: "" });
    mode = "deny";
    expect(await r.authorize(user("bob"), attrs)).to.deep.equal({ allowed: false, reason: "no RBAC" });
    mode = "fail";
    expect(await r.authorize(user("carol"), attrs)).to.include({ allowed: false, undecided: true });
  });

  it("sends at most maxInFlight reviews, queues at most maxQueued, answers the rest undecided at once", async () => {
    mode = "stall";
    const before = received;
    const r = reviewer({ timeoutMs: 3_000, maxInFlight: 2, maxQueued: 3 });
    const all = Array.from({ length: 20 }, (_, i) => r.authorize(user(`u${i}`), attrs));
    // 15 find no room at all and are answered before any deadline, while 2 are sent and 3 wait.
    const early = await Promise.all(all.slice(5));
    expect(early.every((d) => d.undecided && /waiting/.test(d.reason))).to.equal(true);
    expect(r.load).to.deep.equal({ sending: 2, queued: 3 });
    // The two sent reach the server (however slowly), and no third one does while they are held.
    while (received - before < 2) await new Promise((res) => setTimeout(res, 10));
    await new Promise((res) => setTimeout(res, 50));
    expect(received - before, "reviews the stalled server received").to.equal(2);
    const late = await Promise.all(all.slice(0, 5));
    expect(late.every((d) => d.undecided)).to.equal(true);
    expect(r.load).to.deep.equal({ sending: 0, queued: 0 });
  });

  it("the proxy answers 503 with Retry-After when it cannot decide, 403 for a denial, 200 when allowed", async () => {
    const r = reviewer({ timeoutMs: 3_000, maxInFlight: 4, maxQueued: 4 });
    const handler = requestHandler({
      ctx: { ...ctx, apiGroup: GROUP } as RouterContext,
      auth: {
        open: false,
        authenticate: (req) => ({
          ok: true,
          caller: {
            scope,
            user: user(String(req.headers["x-user"])),
            authorize: (u, a) => r.authorize(u, a),
          },
        }),
      },
      metrics: new ProxyMetrics(() => 0, false),
      log: silentLogger,
      readiness: () => [],
    });
    const proxy = createServer(handler);
    await new Promise<void>((res) => proxy.listen(0, "127.0.0.1", res));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const get = (path: string, who: string) => fetch(`${url}${path}`, { headers: { "x-user": who } });
      mode = "stall";
      const stalledAnswer = await get(`/apis/${GROUP}/v1beta1`, "dave");
      expect(stalledAnswer.status).to.equal(503);
      expect(stalledAnswer.headers.get("retry-after")).to.equal("1");
      expect(((await stalledAnswer.json()) as { reason: string }).reason).to.equal("ServiceUnavailable");
      mode = "deny";
      expect((await get(`/apis/${GROUP}/v1beta1`, "erin")).status).to.equal(403);
      expect((await get(`/apis/${GROUP}/v1beta1/namespaces/a/p%6Fds`, "erin")).status).to.equal(403);
      expect((await get(`/apis/${GROUP}/v1beta1/namespaces%2Fa/pods`, "erin")).status).to.equal(400);
      mode = "allow";
      expect((await get(`/apis/${GROUP}/v1beta1`, "dave")).status).to.equal(200);
    } finally {
      proxy.closeAllConnections();
      await new Promise((res) => proxy.close(res));
    }
  });
});
