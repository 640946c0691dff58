import { expect } from "chai";
import fc from "fast-check";
import {
  DEFAULT_RETRY,
  isRetryableStatus,
  isTransientNetworkError,
  parseRetryAfter,
  retryDelay,
} from "../../src/util/retry.js";

describe("util/retry", () => {
  it("retries 429 and 5xx always, 409 only when asked, nothing else", () => {
    expect([429, 500, 502, 503, 504].every((s) => isRetryableStatus(s, false))).to.equal(true);
    expect(isRetryableStatus(409, false)).to.equal(false);
    expect(isRetryableStatus(409, true)).to.equal(true);
    expect([400, 401, 403, 404, 422].some((s) => isRetryableStatus(s, true))).to.equal(false);
  });

  it("knows broken connections from other errors", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(isTransientNetworkError(reset)).to.equal(true);
    expect(isTransientNetworkError(new Error("request to http://x failed, reason: socket hang up"))).to.equal(true);
    expect(
      isTransientNetworkError(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" })),
    ).to.equal(true);
    expect(
      isTransientNetworkError(new Error("Invalid response body while trying to fetch http://x: Premature close")),
    ).to.equal(true);
    expect(isTransientNetworkError(new Error("Unexpected token < in JSON"))).to.equal(false);
    expect(isTransientNetworkError("ECONNRESET")).to.equal(false);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("2")).to.equal(2000);
    expect(parseRetryAfter("0.5")).to.equal(500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 7_000)).to.equal(3000);
    expect(parseRetryAfter("soon")).to.equal(undefined);
    expect(parseRetryAfter(null)).to.equal(undefined);
  });

  it("waits what the server asked (capped), else backs off exponentially with jitter within bounds", () => {
    expect(retryDelay(DEFAULT_RETRY, 1, 1500)).to.equal(1500);
    expect(retryDelay(DEFAULT_RETRY, 1, 10 * 60_000)).to.equal(DEFAULT_RETRY.maxRetryAfterMs);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (retry, r) => {
        const cap = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (retry - 1));
        const d = retryDelay(DEFAULT_RETRY, retry, undefined, () => r);
        expect(d)
          .to.be.at.least(Math.floor(cap / 2))
          .and.at.most(cap);
      }),
    );
  });
});
