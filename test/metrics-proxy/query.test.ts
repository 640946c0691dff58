import { expect } from "chai";
import { parseListQuery } from "../../src/metrics-proxy/query.js";
import { ApiError } from "../../src/metrics-proxy/status.js";

const q = (s: string) => parseListQuery(new URLSearchParams(s));

describe("metrics-proxy list query", () => {
  it("selects by every label selector form and by metadata.name/namespace", () => {
    const labels = { app: "web", tier: "front" };
    const cases: Array<[string, boolean]> = [
      ["labelSelector=app%3Dweb", true],
      ["labelSelector=app%3D%3Dweb", true],
      ["labelSelector=app!%3Dweb", false],
      ["labelSelector=app%20in%20(web,db)", true],
      ["labelSelector=app%20notin%20(web)", false],
      ["labelSelector=tier", true],
      ["labelSelector=!tier", false],
      ["labelSelector=!missing,app", true],
      ["fieldSelector=metadata.name%3Dp1", true],
      ["fieldSelector=metadata.namespace!%3Dns", false],
      ["fieldSelector=metadata.name%3Dp1,metadata.namespace%3Dns&labelSelector=tier%20in%20(front)", true],
    ];
    for (const [query, expected] of cases) expect(q(query).matches("ns", "p1", labels), query).to.equal(expected);
    expect(q("").all).to.equal(true);
  });

  it("answers bad selectors and watch with ApiErrors (400, 405), never a crash", () => {
    for (const bad of [
      "labelSelector=app%20in%20web",
      "labelSelector=%3D%3D",
      "labelSelector=a%3Db%3Dc",
      "fieldSelector=spec.nodeName%3Dx",
      "fieldSelector=metadata.name",
    ]) {
      expect(() => q(bad), bad)
        .to.throw(ApiError)
        .with.property("code", 400);
    }
    expect(() => q("watch=true"))
      .to.throw(ApiError)
      .with.property("code", 405);
  });
});
