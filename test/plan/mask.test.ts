import { expect } from "chai";
import { buildPlan } from "../../src/plan/build.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { MASK, maskSecret, maskSecretPair } from "../../src/plan/mask.js";
import { asLive, clusterObjects } from "./fixtures.js";

const SECRET_B64 = Buffer.from("postgres://u:hunter2@db/x").toString("base64");

describe("plan/mask", () => {
  it("masks every Secret value and the last-applied copy, and leaves other kinds alone", () => {
    const s = maskSecret({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "s",
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"p":"eA=="}}', keep: "k" },
      },
      data: { p: "eA==" },
      stringData: { q: "x" },
    });
    expect(s.data).to.deep.equal({ p: MASK });
    expect(s.stringData).to.deep.equal({ q: MASK });
    expect(s.metadata.annotations).to.deep.equal({
      "kubectl.kubernetes.io/last-applied-configuration": MASK,
      keep: "k",
    });
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { p: "x" } };
    expect(maskSecret(cm)).to.equal(cm);
  });

  it("masks equal values alike and differing values differently", () => {
    const live = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      data: { same: "YQ==", diff: "Yg==", gone: "Yw==" },
    };
    const desired = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      data: { same: "YQ==", diff: "ZA==", added: "ZQ==" },
    };
    const [d, l] = maskSecretPair(desired, live);
    expect(d!.data).to.deep.equal({ same: MASK, diff: "<masked, changed>", added: MASK });
    expect(l!.data).to.deep.equal({ same: MASK, diff: "<masked, before>", gone: MASK });
  });

  it("never prints a secret value in a plan, in any format, yet shows a changed secret as changed", () => {
    const desired = clusterObjects("a");
    const live = desired.map((o) => asLive(o));
    const secret = desired.find((o) => o.kind === "Secret")!;
    secret.stringData = { url: "postgres://u:NEWPASS@db/x" };
    const plan = buildPlan("a", desired, live, { prune: false, allowMassPrune: false });
    const change = plan.changes.find((c) => c.ref.kind === "Secret")!;
    expect(change.action).to.equal("update");
    for (const format of ["text", "json", "markdown"] as const) {
      const out = formatPlanReport({ plans: [plan], errors: [] }, format);
      expect(out).to.not.include("hunter2").and.not.include("NEWPASS").and.not.include(SECRET_B64);
      expect(out).to.not.include(Buffer.from("postgres://u:NEWPASS@db/x").toString("base64"));
      expect(out).to.include("<masked, changed>");
    }
    expect(
      buildPlan("a", clusterObjects("a"), [], { prune: false, allowMassPrune: false })
        .changes.map((c) => c.diff)
        .join(""),
    ).to.not.include("hunter2");
  });
});
