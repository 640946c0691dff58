import { expect } from "chai";
import { TtlCache } from "../../src/metrics-proxy/cache.js";

describe("metrics-proxy cache", () => {
  it("shares one load among concurrent misses and serves hits until the TTL", async () => {
    let now = 0;
    const counts = { hit: 0, miss: 0, shared: 0 };
    const cache = new TtlCache<number>(1000, { hit: () => counts.hit++, miss: () => counts.miss++, shared: () => counts.shared++ }, () => now);
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
    now = 999;
    expect(await cache.get("k", load)).to.equal(1);
    now = 1000;
    expect(await cache.get("k", load)).to.equal(2);
    expect(counts).to.deep.equal({ hit: 1, miss: 2, shared: 2 });
  });

  it("does not cache failures", async () => {
    const cache = new TtlCache<number>(60_000);
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error("down");
    };
    await Promise.all([cache.get("k", failing), cache.get("k", failing)].map((p) => Promise.resolve(p).catch((e: Error) => e.message)));
    expect(calls).to.equal(1);
    expect(await cache.get("k", async () => 7)).to.equal(7);
  });
});
