// The reconciler's fleet page during a rollout: each cluster's wave on its row, the rollout's phase and wave in the
// header, its waves as vc rollout status -o json shows them; a wave filter lists the wave's clusters.
import { expect } from "chai";
import { ReconcilerFleet } from "../../src/reconciler/fleet-page.js";
import type { ReconcileLoop } from "../../src/reconciler/loop.js";
import { newPassState } from "../../src/reconciler/pass.js";
import { newRolloutMemory } from "../../src/rollout/driver.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import { rolloutView } from "../../src/rollout/view.js";
import { parseQuery, queryRows } from "../../src/ui/model.js";

describe("reconciler: the fleet page during a rollout", () => {
  it("shows each cluster's wave, the rollout's phase and wave, and filters a wave", () => {
    const state = newPassState();
    for (const c of ["a1", "a2", "b1", "b2", "b3"])
      state.statuses.set(c, {
        cluster: c,
        hostNamespace: `vc-${c}`,
        history: [],
        result: "applied",
        health: "Healthy",
      });
    const record: RolloutRecord = {
      id: "0123456789ab",
      source: "fleet",
      to: { digest: "d".repeat(64), revision: "e".repeat(40) },
      phase: "Progressing",
      wave: 1,
      waves: [
        { name: "canary", clusters: ["a1", "a2"] },
        { name: "rest", clusters: ["b1", "b2", "b3"] },
      ],
      from: {},
      moved: {
        a1: { from: "f".repeat(64), at: "to", health: "Healthy", movedAt: "2026-01-01T00:00:00Z" },
        a2: { from: "f".repeat(64), at: "to", health: "Healthy", movedAt: "2026-01-01T00:00:00Z" },
        b1: { from: "f".repeat(64), at: "to", health: "Degraded", reason: "pod b1-0 CrashLoopBackOff", movedAt: "x" },
      },
      started: "2026-01-01T00:00:00Z",
      since: "2026-01-01T00:05:00Z",
      message: "wave rest: 1 of 3 moved",
    };
    state.rollout = { ...newRolloutMemory(), active: true, last: record };
    const fleet = new ReconcilerFleet({ target: "kube context test" });
    fleet.attach({ state, deps: undefined, pending: undefined } as unknown as ReconcileLoop);
    const rows = fleet.rows();
    expect(rows.map((r) => [r.name, r.wave?.name, r.wave?.state])).to.deep.equal([
      ["a1", "canary", "done"],
      ["a2", "canary", "done"],
      ["b1", "rest", "current"],
      ["b2", "rest", "current"],
      ["b3", "rest", "current"],
    ]);
    expect(fleet.summary().rollout).to.deep.equal({
      id: "0123456789ab",
      phase: "Progressing",
      wave: { index: 1, name: "rest", of: 2 },
      message: "wave rest: 1 of 3 moved",
    });
    expect(fleet.rollout()).to.deep.equal(rolloutView(record));
    expect(queryRows(rows, parseQuery(new URLSearchParams("wave=canary"))).items.map((r) => r.name)).to.deep.equal([
      "a1",
      "a2",
    ]);
  });
});
