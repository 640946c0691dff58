// The pure parts of the reconciler: affected clusters, webhook decisions, shards, backoff, status folding.
import { expect } from "chai";
import fc from "fast-check";
import { affectedClusters } from "../../src/reconciler/affected.js";
import { decideWebhook, sign, verifySignature } from "../../src/reconciler/webhook.js";
import { inShard, parseShard, shardOf } from "../../src/reconciler/shard.js";
import { Backoff, jitter } from "../../src/util/retry.js";
import { fromData, HISTORY_LIMIT, record, toData, ZERO_COUNTS, type Reconciliation } from "../../src/records/status.js";

describe("reconciler: affected clusters", () => {
  it("maps changed paths to the cluster folders they are in", () => {
    expect(
      affectedClusters([
        "clusters/b/values.yaml",
        "clusters/a/mesh/x/vs.yaml",
        "clusters/b/cluster.yaml",
        "README.md",
        "schemas/values.json",
      ]),
    ).to.deep.equal(["a", "b"]);
  });
  it("ignores files directly in clusters/ and dot-folders, as the loader does", () => {
    expect(affectedClusters(["clusters/defaults.yaml", "clusters/.gitkeep", "clusters/.tmp/x.yaml"])).to.deep.equal([]);
    expect(affectedClusters(["./clusters/a/values.yaml"])).to.deep.equal(["a"]);
  });
});

describe("reconciler: webhook", () => {
  const secret = "hook-secret";
  const body = Buffer.from(JSON.stringify({ ref: "refs/heads/main", after: "abc123" }));
  const req = (headers: Record<string, string>, b = body, method = "POST") => ({ method, headers, body: b });

  it("accepts a correctly signed push to the followed branch", () => {
    const d = decideWebhook(
      req({ "x-hub-signature-256": sign(secret, body), "x-github-event": "push" }),
      secret,
      "main",
    );
    expect(d).to.deep.equal({ status: 202, trigger: true, reason: "push to refs/heads/main", commit: "abc123" });
  });
  it("refuses a bad, truncated or missing signature, and any request when no secret is configured", () => {
    const good = sign(secret, body);
    expect(decideWebhook(req({ "x-hub-signature-256": sign("other", body) }), secret, "main").status).to.equal(401);
    expect(decideWebhook(req({ "x-hub-signature-256": good.slice(0, -2) }), secret, "main").status).to.equal(401);
    expect(decideWebhook(req({}), secret, "main").status).to.equal(401);
    expect(decideWebhook(req({ "x-hub-signature-256": good }), undefined, "main").status).to.equal(401);
    expect(
      decideWebhook(req({ "x-hub-signature-256": good }, Buffer.from(`${body.toString()} `)), secret, "main").status,
    ).to.equal(401);
  });
  it("ignores pushes to other refs, pings and other events; refuses GET", () => {
    const other = Buffer.from(JSON.stringify({ ref: "refs/heads/dev", after: "x" }));
    expect(decideWebhook(req({ "x-hub-signature-256": sign(secret, other) }, other), secret, "main")).to.include({
      status: 200,
      trigger: false,
    });
    expect(
      decideWebhook(req({ "x-hub-signature-256": sign(secret, body), "x-github-event": "ping" }), secret, "main"),
    ).to.include({ status: 200, trigger: false });
    expect(decideWebhook(req({}, body, "GET"), secret, "main").status).to.equal(405);
    const tag = Buffer.from(JSON.stringify({ ref: "refs/tags/v1", after: "y" }));
    expect(decideWebhook(req({ "x-hub-signature-256": sign(secret, tag) }, tag), secret, "v1").trigger).to.equal(true);
  });
  it("verifies exactly the HMAC of the body (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.string({ minLength: 1 }), (bytes, key) => {
        const b = Buffer.from(bytes);
        expect(verifySignature(key, b, sign(key, b))).to.equal(true);
        expect(verifySignature(`${key}x`, b, sign(key, b))).to.equal(false);
      }),
    );
  });
});

describe("reconciler: shards", () => {
  it("parses i/n and refuses nonsense", () => {
    expect(parseShard("1/3")).to.deep.equal({ index: 1, count: 3 });
    expect(() => parseShard("3/3")).to.throw(/invalid shard/);
    expect(() => parseShard("a/b")).to.throw(/invalid shard/);
    expect(() => parseShard("0/0")).to.throw(/invalid shard/);
  });
  it("puts every cluster in exactly one shard, stably and roughly evenly", () => {
    const names = Array.from({ length: 3000 }, (_, i) => `vc-${i}`);
    const sizes = [0, 0, 0];
    for (const n of names) {
      const owners = [0, 1, 2].filter((i) => inShard(n, { index: i, count: 3 }));
      expect(owners).to.have.length(1);
      expect(shardOf(n, 3)).to.equal(owners[0]);
      sizes[owners[0]!]++;
    }
    for (const s of sizes) expect(s).to.be.within(850, 1150);
    expect(shardOf("alpha", 7)).to.equal(shardOf("alpha", 7));
  });
});

describe("reconciler: backoff", () => {
  it("doubles from the initial delay up to the ceiling and resets", () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0.5 });
    expect([b.fail(), b.fail(), b.fail(), b.fail(), b.fail()]).to.deep.equal([100, 200, 400, 800, 1000]);
    b.reset();
    expect(b.fail()).to.equal(100);
  });
  it("jitters within +-10%", () => {
    expect(jitter(1000, 0.1, () => 0)).to.equal(900);
    expect(jitter(1000, 0.1, () => 1)).to.equal(1100);
  });
});

describe("reconciler: status", () => {
  const r = (revision: string, result: Reconciliation["result"], message?: string): Reconciliation => ({
    revision,
    time: "2026-01-01T00:00:00.000Z",
    durationMs: 5,
    result,
    counts: { ...ZERO_COUNTS, created: 2 },
    message,
  });
  it("moves the last applied revision only on success and keeps the last 10 reconciliations", () => {
    let s = record(undefined, "a", "vc-a", r("c1", "applied"));
    expect(s).to.include({ lastAppliedRevision: "c1", lastAttemptedRevision: "c1", result: "applied" });
    expect(s.message).to.equal("2 created, 0 updated, 0 deleted, 0 unchanged");
    s = record(s, "a", "vc-a", r("c2", "invalid", "values.yaml:3:5: bad"));
    expect(s).to.include({
      lastAppliedRevision: "c1",
      lastAttemptedRevision: "c2",
      result: "invalid",
      message: "values.yaml:3:5: bad",
    });
    for (let i = 3; i < 20; i++) s = record(s, "a", "vc-a", r(`c${i}`, "applied"));
    expect(s.history).to.have.length(HISTORY_LIMIT);
    expect(s.history[0]!.revision).to.equal("c19");
  });
  it("round-trips through ConfigMap data and tolerates damage", () => {
    const s = record(record(undefined, "a", "vc-a", r("c1", "applied")), "a", "vc-a", r("c2", "failed", "boom"));
    expect(fromData(toData(s))).to.deep.equal(s);
    expect(Object.values(toData(s)).every((v) => typeof v === "string")).to.equal(true);
    expect(fromData({ history: "{not json", result: "weird" }, "b", "vc-b")).to.deep.equal({
      cluster: "b",
      hostNamespace: "vc-b",
      history: [],
      damagedHistory: 1,
    });
  });
});

describe("reconciler: JSON logs and redaction", () => {
  it("writes one JSON object per line with time, level and message, from the minimum level up", async () => {
    const { PassThrough } = await import("node:stream");
    const { jsonLogger } = await import("../../src/model/log.js");
    const out = new PassThrough();
    let text = "";
    out.on("data", (d: Buffer) => (text += d.toString()));
    const log = jsonLogger({ out, min: "info", now: () => new Date("2026-01-01T00:00:00Z") });
    log.debug("hidden");
    log.info("reconciled", { cluster: "a", result: "applied" });
    log.error("boom");
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).to.deep.equal([
      { time: "2026-01-01T00:00:00.000Z", level: "info", msg: "reconciled", cluster: "a", result: "applied" },
      { time: "2026-01-01T00:00:00.000Z", level: "error", msg: "boom" },
    ]);
  });
  it("never shows credentials embedded in a repository URL", async () => {
    const { redactUrl } = await import("../../src/git/auth.js");
    const { GitSource } = await import("../../src/reconciler/source.js");
    expect(redactUrl("https://bot:s3cret@git.example.com/fleet.git")).to.equal("https://***@git.example.com/fleet.git");
    expect(
      new GitSource({ url: "https://bot:s3cret@git.example.com/fleet.git", dir: "/nonexistent" }).description,
    ).to.not.include("s3cret");
  });
});
