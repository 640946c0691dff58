// vc apply --wait's loop: healthy, degraded and timed out, on an injected clock (no real waiting).
import { expect } from "chai";
import type { ClusterHealth } from "../../src/model/health.js";
import { waitForHealth, type WaitClock } from "../../src/health/wait.js";

function fakeClock(): WaitClock & { slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return { slept, now: () => t, sleep: async (ms) => void (slept.push(ms), (t += ms)) };
}
const h = (status: ClusterHealth["status"], reason?: string): ClusterHealth => ({
  status,
  ...(reason ? { reason } : {}),
  objects: [],
});

describe("health: waiting for clusters", () => {
  it("returns healthy once every cluster is, looking again only at those that are not", async () => {
    const clock = fakeClock();
    const script: Record<string, ClusterHealth[]> = {
      a: [h("Progressing", "ready 0/1"), h("Healthy")],
      b: [h("Healthy")],
    };
    const looks: string[] = [];
    const out = await waitForHealth(["b", "a"], async (c) => (looks.push(c), script[c]!.shift()!), clock, {
      timeoutMs: 60_000,
    });
    expect(out.result).to.equal("healthy");
    expect(looks).to.deep.equal(["a", "b", "a"]);
    expect(clock.slept).to.deep.equal([1000]);
  });

  it("stops at the first Degraded cluster with its reason", async () => {
    const clock = fakeClock();
    const out = await waitForHealth(
      ["a", "b"],
      async (c) => (c === "b" ? h("Degraded", "pod b-0 CrashLoopBackOff") : h("Progressing")),
      clock,
      { timeoutMs: 60_000 },
    );
    expect(out).to.deep.include({ result: "degraded", cluster: "b", reason: "pod b-0 CrashLoopBackOff" });
  });

  it(
    "times out at the deadline, naming the first cluster not healthy; intervals double up to the bound and never " +
      "pass the deadline",
    async () => {
      const clock = fakeClock();
      const out = await waitForHealth(["a"], async () => h("Progressing", "StatefulSet vc-a/a: ready 0/1"), clock, {
        timeoutMs: 20_000,
      });
      expect(out).to.deep.include({
        result: "timeout",
        cluster: "a",
        reason: "Progressing: StatefulSet vc-a/a: ready 0/1",
      });
      expect(clock.slept).to.deep.equal([1000, 2000, 4000, 5000, 5000, 3000]);
      expect(clock.now()).to.equal(20_000);
    },
  );
});
