// The rollout step: every phase transition, maxUnavailable, the gate's timeout, halt against restore, pause, resume,
// abort, a replacing rollout.
import { expect } from "chai";
import { begin, step } from "../../src/rollout/step.js";
import { rolloutSettings, type RolloutFile } from "../../src/model/rollout-file.js";
import type { Observations, RolloutRecord, RolloutRequest } from "../../src/rollout/types.js";
import type { HealthStatus } from "../../src/model/health.js";

const OLD = "a".repeat(64);
const NEW = "b".repeat(64);
const T0 = Date.parse("2026-11-25T10:00:00Z");
const file: RolloutFile = {
  waves: [{ name: "canary" }, { name: "early" }, { name: "rest" }],
  healthGate: { timeout: "10m" },
};
const waves = [
  { name: "canary", clusters: ["shop"] },
  { name: "early", clusters: ["a", "b", "c"] },
  { name: "rest", clusters: ["d"] },
];
const from = Object.fromEntries(["shop", "a", "b", "c", "d"].map((c) => [c, OLD]));
const start = (): RolloutRecord =>
  begin({
    source: "platform",
    to: { digest: NEW, revision: "r2" },
    waves: structuredClone(waves),
    from: { ...from },
    now: T0,
  });
const obs = (now: number, health: Record<string, HealthStatus> = {}, reason?: string): Observations => ({
  now,
  health: Object.fromEntries(
    Object.entries(health).map(([c, s]) => [c, { status: s, ...(reason && s !== "Healthy" ? { reason } : {}) }]),
  ),
});
const ask = (r: RolloutRecord, action: RolloutRequest["action"]): RolloutRecord => ({
  ...r,
  request: { action, by: "alice", at: "2026-11-25T10:00:00Z" },
});
const min = 60_000;

describe("rollout: the step", () => {
  const s = rolloutSettings(file);

  it("starts at the first wave, and a rollout without clusters is Completed at once", () => {
    const r = start();
    expect(r).to.deep.include({ id: NEW.slice(0, 12), phase: "Progressing", wave: 0 });
    const empty = begin({
      source: "p",
      to: { digest: NEW },
      waves: [{ name: "canary", clusters: [] }],
      from: {},
      now: T0,
    });
    expect(empty.phase).to.equal("Completed");
  });

  it("moves the canary, waits for its health, then moves the next wave maxUnavailable at a time, and completes", () => {
    let out = step(start(), s, obs(T0));
    expect(out.moves).to.deep.equal([{ cluster: "shop", base: NEW }]);
    expect(out.record.moved.shop).to.deep.include({ from: OLD, at: "to", health: "Unknown" });
    // Still Progressing: nothing more moves while the canary is not Healthy.
    out = step(out.record, s, obs(T0 + 1000, { shop: "Progressing" }));
    expect(out.moves).to.deep.equal([]);
    expect(out.record.phase).to.equal("Progressing");
    // Healthy: the canary wave passes; no pause: the next wave moves one cluster (maxUnavailable 1).
    out = step(out.record, s, obs(T0 + 2000, { shop: "Healthy" }));
    expect(out.record.wave).to.equal(1);
    expect(out.moves).to.deep.equal([{ cluster: "a", base: NEW }]);
    out = step(out.record, s, obs(T0 + 3000, { a: "Healthy" }));
    expect(out.moves).to.deep.equal([{ cluster: "b", base: NEW }]);
    out = step(out.record, s, obs(T0 + 4000, { b: "Healthy" }));
    expect(out.moves).to.deep.equal([{ cluster: "c", base: NEW }]);
    out = step(out.record, s, obs(T0 + 5000, { c: "Healthy" }));
    expect(out.moves).to.deep.equal([{ cluster: "d", base: NEW }]);
    expect(out.record.wave).to.equal(2);
    out = step(out.record, s, obs(T0 + 6000, { d: "Healthy" }));
    expect(out.record.phase).to.equal("Completed");
    expect(out.moves).to.deep.equal([]);
    // A final rollout stays as it is.
    const again = step(out.record, s, obs(T0 + 7000));
    expect(again.changed).to.equal(false);
  });

  it("moves as many clusters at once as maxUnavailable allows, counting those not yet Healthy", () => {
    const two = rolloutSettings({ ...file, maxUnavailable: 2 });
    let out = step(start(), two, obs(T0, {}));
    out = step(out.record, two, obs(T0 + 1, { shop: "Healthy" }));
    expect(out.moves.map((m) => m.cluster)).to.deep.equal(["a", "b"]);
    out = step(out.record, two, obs(T0 + 2, { a: "Healthy", b: "Progressing" }));
    expect(out.moves.map((m) => m.cluster)).to.deep.equal(["c"]);
    const pct = rolloutSettings({ ...file, maxUnavailable: "100%" });
    out = step(step(start(), pct, obs(T0)).record, pct, obs(T0 + 1, { shop: "Healthy" }));
    expect(out.moves.map((m) => m.cluster)).to.deep.equal(["a", "b", "c"]);
  });

  it("waits out the pause between waves, and a manual pause until resume", () => {
    const paused = rolloutSettings({
      ...file,
      pause: "2m",
      waves: [{ name: "canary", pause: "manual" }, { name: "early" }, { name: "rest" }],
    });
    let out = step(start(), paused, obs(T0));
    out = step(out.record, paused, obs(T0 + 1000, { shop: "Healthy" }));
    expect(out.record.phase).to.equal("Waiting");
    expect(out.record.message).to.contain("vc rollout resume");
    out = step(out.record, paused, obs(T0 + 60 * min));
    expect(out.record.phase).to.equal("Waiting");
    out = step(ask(out.record, "resume"), paused, obs(T0 + 61 * min));
    expect(out.record).to.deep.include({ phase: "Progressing", wave: 1 });
    expect(out.record.request).to.equal(undefined);
    expect(out.moves).to.deep.equal([{ cluster: "a", base: NEW }]);
    // early: a 2m pause after it.
    for (const c of ["a", "b", "c"]) out = step(out.record, paused, obs(T0 + 62 * min, { [c]: "Healthy" }));
    expect(out.record).to.deep.include({ phase: "Waiting", wave: 1 });
    out = step(out.record, paused, obs(T0 + 63 * min));
    expect(out.record.phase).to.equal("Waiting");
    out = step(out.record, paused, obs(T0 + 64 * min + 1));
    expect(out.record).to.deep.include({ phase: "Progressing", wave: 2 });
    expect(out.moves).to.deep.equal([{ cluster: "d", base: NEW }]);
  });

  it("halts on a Degraded cluster, naming it and its reason; onFailure halt leaves the wave as it is", () => {
    let out = step(start(), s, obs(T0));
    out = step(out.record, s, obs(T0 + 1000, { shop: "Degraded" }, "pod shop-0 CrashLoopBackOff"));
    expect(out.record.phase).to.equal("Halted");
    expect(out.record.message).to.equal("wave canary halted: cluster shop is Degraded: pod shop-0 CrashLoopBackOff");
    expect(out.moves).to.deep.equal([]);
    expect(out.record.moved.shop!.at).to.equal("to");
    // Halted: nothing moves, whatever the health says.
    const still = step(out.record, s, obs(T0 + 2000, { shop: "Healthy" }));
    expect(still.record.phase).to.equal("Halted");
    expect(still.moves).to.deep.equal([]);
  });

  it("onFailure restore sends the failed wave's moved clusters back to their previous base", () => {
    const restore = rolloutSettings({ ...file, onFailure: "restore", maxUnavailable: 3 });
    let out = step(step(start(), restore, obs(T0)).record, restore, obs(T0 + 1, { shop: "Healthy" }));
    expect(out.moves.map((m) => m.cluster)).to.deep.equal(["a", "b", "c"]);
    out = step(
      out.record,
      restore,
      obs(T0 + 2, { a: "Healthy", b: "Degraded", c: "Progressing" }, "pod b-0 ImagePullBackOff"),
    );
    expect(out.record.phase).to.equal("Halted");
    expect(out.moves).to.deep.equal([
      { cluster: "a", base: OLD },
      { cluster: "b", base: OLD },
      { cluster: "c", base: OLD },
    ]);
    expect(out.record.moved.shop!.at).to.equal("to"); // an earlier wave is not restored
    expect(out.record.moved.b!.at).to.equal("back");
    // Resume after a fix: the restored clusters move again under a fresh gate.
    out = step(ask(out.record, "resume"), restore, obs(T0 + 3));
    expect(out.record.phase).to.equal("Progressing");
    expect(out.moves.map((m) => m.cluster)).to.deep.equal(["a", "b", "c"]);
  });

  it("halts when the gate times out, naming a cluster that is not Healthy", () => {
    let out = step(start(), s, obs(T0));
    out = step(out.record, s, obs(T0 + 10 * min, { shop: "Progressing" }, "StatefulSet vc-shop/shop: ready 0/1"));
    expect(out.record.phase).to.equal("Progressing");
    out = step(out.record, s, obs(T0 + 10 * min + 1));
    expect(out.record.phase).to.equal("Halted");
    expect(out.record.message).to.equal(
      "wave canary halted: health gate timed out after 600s: cluster shop is Progressing: StatefulSet " +
        "vc-shop/shop: ready 0/1",
    );
  });

  it("resume of a Halted rollout checks the failed wave again: still Degraded halts again, Healthy goes on", () => {
    let out = step(step(start(), s, obs(T0)).record, s, obs(T0 + 1, { shop: "Degraded" }, "x"));
    const halted = out.record;
    // What was read before the resume does not count: the wave waits for a fresh read.
    out = step(ask(halted, "resume"), s, obs(T0 + 2, { shop: "Degraded" }, "x"));
    expect(out.record.phase).to.equal("Progressing");
    expect(out.record.moved.shop!.health).to.equal("Unknown");
    expect(out.moves).to.deep.equal([]);
    const resumed = out.record;
    out = step(resumed, s, obs(T0 + 3, { shop: "Degraded" }, "x"));
    expect(out.record.phase).to.equal("Halted");
    out = step(resumed, s, obs(T0 + 3, { shop: "Healthy" }));
    expect(out.record).to.deep.include({ phase: "Progressing", wave: 1 });
    expect(out.moves).to.deep.equal([{ cluster: "a", base: NEW }]);
  });

  it("pause stops moving and keeps the gate from timing out; resume goes back to where it was", () => {
    let out = step(start(), s, obs(T0));
    out = step(ask(out.record, "pause"), s, obs(T0 + 1000, { shop: "Healthy" }));
    expect(out.record.phase).to.equal("Paused");
    expect(out.record.resumeTo).to.equal("Progressing");
    expect(out.moves).to.deep.equal([]);
    out = step(out.record, s, obs(T0 + 60 * min, { shop: "Healthy" }));
    expect(out.record.phase).to.equal("Paused");
    out = step(ask(out.record, "resume"), s, obs(T0 + 61 * min, { shop: "Healthy" }));
    expect(out.record).to.deep.include({ phase: "Progressing", wave: 1 });
    expect(out.record.resumeTo).to.equal(undefined);
  });

  it("a request that does not apply is cleared and changes nothing else", () => {
    const r = start();
    const out = step(ask(r, "resume"), s, obs(T0));
    expect(out.record.request).to.equal(undefined);
    expect(out.record.phase).to.equal("Progressing");
    const done = { ...r, phase: "Completed" as const };
    expect(step(ask(done, "abort"), s, obs(T0)).record.phase).to.equal("Completed");
  });

  it("abort sends every moved cluster back to its previous base: Aborting, then Aborted", () => {
    let out = step(step(start(), s, obs(T0)).record, s, obs(T0 + 1, { shop: "Healthy" }));
    expect(Object.keys(out.record.moved)).to.deep.equal(["shop", "a"]);
    out = step(ask(out.record, "abort"), s, obs(T0 + 2));
    expect(out.record.phase).to.equal("Aborting");
    expect(out.record.message).to.contain("aborted by alice");
    expect(out.moves).to.deep.equal([
      { cluster: "a", base: OLD },
      { cluster: "shop", base: OLD },
    ]);
    // Only once every moved cluster was applied back at its previous base does the abort end.
    out = step(out.record, s, obs(T0 + 3));
    expect(out.record.phase).to.equal("Aborting");
    out = step(out.record, s, { ...obs(T0 + 4), returned: ["shop"] });
    expect(out.record.phase).to.equal("Aborting");
    out = step(out.record, s, { ...obs(T0 + 5), returned: ["a", "shop"] });
    expect(out.record.phase).to.equal("Aborted");
    expect(out.moves).to.deep.equal([]);
  });

  it("a new base replacing a running rollout starts from the first wave, each cluster's current pin its from", () => {
    const running = step(start(), s, obs(T0)).record;
    const NEWER = "c".repeat(64);
    const next = begin({
      source: "platform",
      to: { digest: NEWER },
      waves: structuredClone(waves),
      from: { ...from, shop: NEW },
      now: T0 + 5,
      replaces: running,
    });
    expect(next).to.deep.include({ id: NEWER.slice(0, 12), phase: "Progressing", wave: 0, moved: {} });
    expect(next.message).to.contain(`replaces rollout ${NEW.slice(0, 12)} (Progressing)`);
    const out = step(next, s, obs(T0 + 6));
    expect(out.moves).to.deep.equal([{ cluster: "shop", base: NEWER }]);
    expect(out.record.moved.shop!.from).to.equal(NEW);
  });
});
