import { expect } from "chai";
import { TtlCache } from "../../src/metrics-proxy/cache.js";

describe("metrics-proxy cache", () => {
  it("shares one load among concurrent misses and serves hits until the TTL", async () => {
    let now = 0;
    const counts = { hit: 0, miss: 0, shared: 0 };
    const cache = new TtlCache<number>(
      1000,
      { hit: () => counts.hit++, miss: () => counts.miss++, shared: () => counts.shared++ },
      () => now,
    );
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return loads;
    };
    const pending = [cache.get("k", load), cache.get("k", load), cache.get("k", load)];
    release();
    expect(await Promise.all(pending)).to.deep.equal([1, 1, 1]);
    expect(loads).to.equal(1);
    now = 799;
    expect(await cache.get("k", load)).to.equal(1);
    now = 1000;
    expect(await cache.get("k", load)).to.equal(2);
    expect(counts).to.deep.equal({ hit: 1, miss: 2, shared: 2 });
  });

  it("renews a value read after 80% of its TTL in the background, serving the old one meanwhile", async () => {
    let now = 0;
    const cache = new TtlCache<string>(1000, undefined, () => now);
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await cache.get("k", load)).to.equal("v1");
    now = 700;
    expect(await cache.get("k", load)).to.equal("v1");
    expect(loads).to.equal(1);
    now = 850;
    expect(await cache.get("k", load)).to.equal("v1"); // served while v2 loads
    expect(loads).to.equal(2);
    await new Promise((r) => setImmediate(r));
    now = 1500; // v2 was loaded at 850: still fresh
    expect(await cache.get("k", load)).to.equal("v2");
    expect(loads).to.equal(2);
  });

  it("does not retry a failed background refresh; the value expires and the next read sees the failure", async () => {
    let now = 0;
    const cache = new TtlCache<string>(1000, undefined, () => now);
    let calls = 0;
    await cache.get("k", async () => "v1");
    const failing = async () => {
      calls++;
      throw new Error("host down");
    };
    now = 900;
    expect(await cache.get("k", failing)).to.equal("v1");
    expect(await cache.get("k", failing)).to.equal("v1");
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(1);
    now = 1000;
    let message = "";
    await Promise.resolve(cache.get("k", failing)).catch((e: Error) => (message = e.message));
    expect(message).to.equal("host down");
  });

  it("does not cache failures", async () => {
    const cache = new TtlCache<number>(60_000);
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error("down");
    };
    await Promise.all(
      [cache.get("k", failing), cache.get("k", failing)].map((p) => Promise.resolve(p).catch((e: Error) => e.message)),
    );
    expect(calls).to.equal(1);
    expect(await cache.get("k", async () => 7)).to.equal(7);
  });
});
