// Webhook slots under a slow-body flood (issue: sixteen connections dribbling a wrongly signed body locked every
// genuine push out with 503): the slot table's fairness and deadlines on an injected clock, then real sockets.
import { expect } from "chai";
import { request, type ClientRequest } from "node:http";
import { createMetrics } from "../../src/reconciler/metrics.js";
import { sourceOf, startServer, WEBHOOK_PATH, type RunningServer } from "../../src/reconciler/server.js";
import { sign } from "../../src/reconciler/webhook.js";
import { DEFAULT_WEBHOOK_LIMITS, WebhookSlots, type WebhookLimits } from "../../src/reconciler/webhook-slots.js";
import { silentLogger } from "../../src/model/log.js";

const SECRET = "s3cret";
const WRONG = `sha256=${"0".repeat(64)}`;

describe("reconciler: webhook slots (table)", () => {
  const limits: WebhookLimits = {
    ...DEFAULT_WEBHOOK_LIMITS,
    maxPending: 4,
    perAddress: 2,
    bodyTimeoutMs: 10_000,
    rateGraceMs: 1_000,
    minBytesPerSecond: 100,
  };

  it(
    "refuses an address past its cap; when full, a newcomer takes the oldest slot of the heaviest address, never " +
      "of an equal one",
    () => {
      let t = 0;
      const slots = new WebhookSlots(limits, () => t);
      const a1 = slots.admit("a");
      t = 1;
      expect(slots.admit("a")).to.have.property("admitted");
      expect(slots.admit("a")).to.deep.equal({ refused: "address" });
      expect(slots.admit("b")).to.have.property("admitted");
      expect(slots.admit("c")).to.have.property("admitted");
      expect(slots.size).to.equal(4);
      // Full: a holds 2, d holds 0: d takes a's oldest.
      const d = slots.admit("d");
      expect("admitted" in d && d.evicted).to.equal("admitted" in a1 && a1.admitted);
      expect(slots.held("a")).to.equal(1);
      // Now every address holds one: a fifth address takes the oldest slot (none is past the grace period yet).
      const e = slots.admit("e");
      expect("admitted" in e && e.evicted?.address).to.equal("a");
      expect(slots.size).to.equal(4);
    },
  );

  it(
    "issue #38 case 11: when every address holds one, a newcomer takes the slot of the slowest sender past " +
      "the grace",
    () => {
      let t = 0;
      const slots = new WebhookSlots(limits, () => t);
      const held = ["a", "b", "c", "d"].map((a) => slots.admit(a));
      const rates = [300, 120, 200, 5_000];
      t = 2_000;
      held.forEach((h, i) => {
        if ("admitted" in h) h.admitted.bytes = rates[i]! * 2;
      });
      const e = slots.admit("e");
      expect("admitted" in e && e.evicted?.address).to.equal("b");
      // The newcomer is within its grace: the next one takes the next slowest, never the newcomer.
      const f = slots.admit("f");
      expect("admitted" in f && f.evicted?.address).to.equal("c");
      expect(slots.held("e") + slots.held("f")).to.equal(2);
    },
  );

  it("gives up a slot past the body deadline, or below the minimum rate once the grace period is over", () => {
    let t = 0;
    const slots = new WebhookSlots(limits, () => t);
    const slow = slots.admit("a");
    const fast = slots.admit("b");
    if (!("admitted" in slow) || !("admitted" in fast)) throw new Error("not admitted");
    slow.admitted.bytes = 1;
    fast.admitted.bytes = 5_000;
    t = 999;
    expect(slots.overdue()).to.deep.equal([]);
    t = 1_000;
    expect(slots.overdue()).to.deep.equal([{ slot: slow.admitted, reason: "body slower than the minimum rate" }]);
    fast.admitted.bytes = 1_000_000;
    t = 10_000;
    expect(slots.overdue().map((o) => o.reason)).to.deep.equal(["body deadline passed", "body deadline passed"]);
  });

  it("counts an IPv4 sender by its address (also IPv4-mapped) and an IPv6 sender by its /64", () => {
    expect(sourceOf("::ffff:10.1.2.3")).to.equal("10.1.2.3");
    expect(sourceOf("10.1.2.3")).to.equal("10.1.2.3");
    expect(sourceOf("2001:db8:0:1::7")).to.equal(sourceOf("2001:0db8:0000:0001:ffff:1:2:3"));
    expect(sourceOf("2001:db8:0:1::7")).to.not.equal(sourceOf("2001:db8:0:2::7"));
  });
});

describe("reconciler: webhook slots under a slow-body flood (real sockets)", function () {
  this.timeout(60_000);
  let srv: RunningServer | undefined;
  const held: ClientRequest[] = [];
  const pushes: Array<string | undefined> = [];
  const start = async (limits: Partial<WebhookLimits>) => {
    srv = await startServer("127.0.0.1:0", {
      registry: createMetrics({ defaults: false }).registry,
      ready: () => true,
      healthy: () => true,
      webhookSecret: SECRET,
      webhookLimits: limits,
      ref: "main",
      onPush: (c) => pushes.push(c),
      logger: silentLogger,
    });
    return srv;
  };
  afterEach(async () => {
    for (const r of held.splice(0)) r.destroy();
    await srv?.close();
    srv = undefined;
  });

  /**
   * A sender that sends headers with a wrong signature and one byte of a 1000-byte body, then holds on; resolves with
   * the status it gets.
   */
  const dribble = (url: string, localAddress: string): Promise<number> =>
    new Promise((resolve) => {
      const req = request(`${url}${WEBHOOK_PATH}`, {
        method: "POST",
        agent: false,
        localAddress,
        headers: { "X-Hub-Signature-256": WRONG, "Content-Length": "1000" },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", () => resolve(-1));
      req.write("x");
      req.flushHeaders();
      held.push(req);
    });

  /** A genuine signed push from `localAddress`. */
  const push = (url: string, localAddress: string, after: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ ref: "refs/heads/main", after });
      const req = request(
        `${url}${WEBHOOK_PATH}`,
        {
          method: "POST",
          agent: false,
          localAddress,
          headers: {
            "X-GitHub-Event": "push",
            "X-Hub-Signature-256": sign(SECRET, body),
            "Content-Type": "application/json",
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  /** Waits until `n` of the statuses have arrived (the refused ones), without timing anything. */
  const settled = async (statuses: Array<Promise<number>>, n: number): Promise<number[]> => {
    const got: number[] = [];
    await new Promise<void>((resolve) => {
      for (const p of statuses) p.then((s) => (got.push(s), got.length === n && resolve()));
    });
    return got;
  };

  it(
    "100 slow connections from one address hold at most its share; a genuine push from another is " + "accepted",
    async () => {
      const { url } = await start({ bodyTimeoutMs: 600_000, rateGraceMs: 600_000 });
      const flood = Array.from({ length: 100 }, () => dribble(url, "127.0.0.1"));
      const refused = await settled(flood, 100 - DEFAULT_WEBHOOK_LIMITS.perAddress);
      expect(new Set(refused)).to.deep.equal(new Set([503]));
      const before = pushes.length;
      expect(await push(url, "127.0.0.2", "genuine-1")).to.equal(202);
      expect(pushes.slice(before)).to.deep.equal(["genuine-1"]);
    },
  );

  it(
    "100 slow connections from ten addresses filling every slot: a genuine push from an eleventh takes a slot and " +
      "is accepted",
    async () => {
      const { url } = await start({ bodyTimeoutMs: 600_000, rateGraceMs: 600_000 });
      const flood = Array.from({ length: 100 }, (_, i) => dribble(url, `127.0.1.${(i % 10) + 1}`));
      // 16 slots: each of the ten addresses holds one or two, the rest are refused.
      const refused = await settled(flood, 100 - DEFAULT_WEBHOOK_LIMITS.maxPending);
      expect(new Set(refused)).to.deep.equal(new Set([503]));
      for (const n of [1, 2, 3]) expect(await push(url, "127.0.0.2", `genuine-${n}`)).to.equal(202);
      expect(pushes.slice(-3)).to.deep.equal(["genuine-1", "genuine-2", "genuine-3"]);
    },
  );

  it("a body below the minimum rate is cut short with 408, freeing its slot for a genuine push", async () => {
    const { url } = await start({ bodyTimeoutMs: 2_000, rateGraceMs: 50, minBytesPerSecond: 1024 });
    // Sixteen addresses, one slot each: every slot taken, nothing left to evict.
    const flood = Array.from({ length: 16 }, (_, i) => dribble(url, `127.0.2.${i + 1}`));
    expect(await settled(flood, 16)).to.deep.equal(Array(16).fill(408));
    expect(await push(url, "127.0.0.2", "after-flood")).to.equal(202);
  });

  /** A sender with a wrong signature that sends 64 bytes every 20 ms (above the minimum rate) of a 1 MB body. */
  const trickle = (url: string, localAddress: string): Promise<number> =>
    new Promise((resolve) => {
      const req = request(`${url}${WEBHOOK_PATH}`, {
        method: "POST",
        agent: false,
        localAddress,
        headers: { "X-Hub-Signature-256": WRONG, "Content-Length": String(1 << 20) },
      });
      const timer = setInterval(() => req.write("x".repeat(64)), 20);
      const done = (status: number) => {
        clearInterval(timer);
        resolve(status);
      };
      req.on("response", (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      req.on("error", () => done(-1));
      req.on("close", () => done(-1));
      req.write("x".repeat(64));
      held.push(req);
    });

  it(
    "issue #38 case 11: sixteen addresses each trickling one badly signed body above the minimum rate refuse no " +
      "genuine push",
    async () => {
      const { url } = await start({ bodyTimeoutMs: 600_000, rateGraceMs: 100, minBytesPerSecond: 1024 });
      const flood = Array.from({ length: 16 }, (_, i) => trickle(url, `127.0.3.${i + 1}`));
      // Every slot is held once the sixteenth sender has been read from.
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (held.length === 16) clearInterval(check), resolve();
        }, 10);
      });
      const statuses: number[] = [];
      for (let n = 1; n <= 37; n++) statuses.push(await push(url, "127.0.0.2", `genuine-${n}`));
      expect(statuses.filter((s) => s !== 202)).to.deep.equal([]);
      expect(pushes.slice(-37)).to.deep.equal(Array.from({ length: 37 }, (_, i) => `genuine-${i + 1}`));
      void flood;
    },
  );

  it("a sender that never finishes its headers is disconnected at the header deadline", async () => {
    const { url } = await start({ headersTimeoutMs: 100 });
    const { connect } = await import("node:net");
    const u = new URL(url);
    const closed = await new Promise<string>((resolve) => {
      const sock = connect(Number(u.port), u.hostname, () => sock.write("POST /webhook HTTP/1.1\r\nHost: x\r\nX-Hub-"));
      let got = "";
      sock.on("data", (d) => (got += d));
      sock.on("close", () => resolve(got));
      sock.on("error", () => {});
    });
    expect(closed).to.match(/^HTTP\/1\.1 408/);
  });
});

describe("reconciler: webhook limit flags", () => {
  it("refuses a bad --webhook-slots, --webhook-min-rate or timeout before starting anything (exit 2)", async () => {
    const { runVc } = await import("../support/vc.js");
    const { join } = await import("node:path");
    const repo = join(import.meta.dirname, "..", "..");
    for (const [flag, value, message] of [
      ["--webhook-slots", "0", /invalid --webhook-slots "0": use a positive integer/],
      ["--webhook-slots-per-address", "x", /invalid --webhook-slots-per-address "x"/],
      ["--webhook-min-rate", "-5", /invalid --webhook-min-rate "-5"/],
      ["--webhook-body-timeout", "soon", /invalid duration "soon"/],
      ["--webhook-header-timeout", "0s", /must be longer than 0/],
    ] as const) {
      const res = await runVc([
        "reconcile",
        "--repo",
        repo,
        "--target",
        "dir:/nonexistent-vc-out",
        "--once",
        flag,
        value,
      ]);
      expect(res.code, res.stderr).to.equal(2);
      expect(res.stderr).to.match(message);
    }
  });
});
