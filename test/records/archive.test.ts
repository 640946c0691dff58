import { expect } from "chai";
import {
  archiveDepth,
  DEFAULT_HISTORY_LIMIT,
  HISTORY_BYTES,
  mergeEntries,
  nextArchive,
} from "../../src/records/archive.js";
import {
  actorOf,
  appliedBy,
  fromData,
  HISTORY_LIMIT,
  MESSAGE_LIMIT,
  record,
  toData,
  ZERO_COUNTS,
  type ClusterStatus,
  type Reconciliation,
} from "../../src/records/status.js";

const at = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString();
const entry = (i: number, over: Partial<Reconciliation> = {}): Reconciliation => ({
  revision: `c${i}`,
  time: at(i),
  durationMs: 5,
  result: "applied",
  counts: { ...ZERO_COUNTS, updated: 1 },
  ...over,
});
const bytes = (entries: readonly Reconciliation[]) => Buffer.byteLength(JSON.stringify(entries), "utf8");

describe("status history and its archive (pure)", () => {
  it("record keeps the newest 10 in the status and hands the one it pushes out to the store (spilled)", () => {
    let s: ClusterStatus | undefined;
    for (let i = 1; i <= HISTORY_LIMIT; i++) s = record(s, "a", "vc-a", entry(i));
    expect(s!.spilled).to.equal(undefined);
    s = record(s, "a", "vc-a", entry(11));
    expect(s.history.map((r) => r.revision)).to.deep.equal([
      "c11",
      "c10",
      "c9",
      "c8",
      "c7",
      "c6",
      "c5",
      "c4",
      "c3",
      "c2",
    ]);
    expect(s.spilled!.map((r) => r.revision)).to.deep.equal(["c1"]);
    // What was spilled once is not spilled again by the next fold, nor stored in the status.
    const next = record(s, "a", "vc-a", entry(12));
    expect(next.spilled!.map((r) => r.revision)).to.deep.equal(["c2"]);
    expect(toData(next)).to.not.have.property("spilled");
  });

  it(
    "record cuts a runaway message (status and entry), keeps who applied the live revision, and clears it when " +
      "the reconciler applies",
    () => {
      const huge = `object failed: ${"x".repeat(200_000)}`;
      let s = record(
        undefined,
        "a",
        "vc-a",
        entry(1, { result: "failed", message: huge, via: "apply", by: "alice", byFrom: "SelfSubjectReview" }),
      );
      expect(s.message!.length).to.equal(MESSAGE_LIMIT);
      expect(s.message).to.match(/\.\.\. \(truncated\)$/);
      expect(s.history[0]!.message!.length).to.equal(MESSAGE_LIMIT);
      expect(s.lastAppliedBy).to.equal(undefined); // a failed run applied nothing
      s = record(s, "a", "vc-a", entry(2, { via: "apply", by: "alice", byFrom: "SelfSubjectReview" }));
      expect([s.lastAppliedRevision, s.lastAppliedBy, s.lastAppliedVia, appliedBy(s)]).to.deep.equal([
        "c2",
        "alice",
        "apply",
        "alice (vc apply)",
      ]);
      const back = fromData(toData(s))!;
      expect([
        back.lastAppliedBy,
        back.lastAppliedVia,
        back.history[0]!.by,
        back.history[0]!.byFrom,
        back.history[0]!.via,
      ]).to.deep.equal(["alice", "apply", "alice", "SelfSubjectReview", "apply"]);
      s = record(s, "a", "vc-a", entry(3));
      expect([
        s.lastAppliedBy,
        s.lastAppliedVia,
        appliedBy(s),
        actorOf(s.history[0]!),
        actorOf(s.history[1]!),
      ]).to.deep.equal([undefined, undefined, "reconciler", "reconciler", "alice (vc apply)"]);
    },
  );

  it("reads a status in the format the reconciler wrote before vc apply recorded runs", () => {
    const old = {
      cluster: "a",
      hostNamespace: "vc-a",
      lastAppliedRevision: "c2",
      lastAppliedTime: at(2),
      lastAttemptedRevision: "c2",
      lastAttemptTime: at(2),
      result: "applied",
      message: "0 created, 1 updated, 0 deleted, 3 unchanged",
      owner: "fleet-0123456789",
      history: JSON.stringify([entry(2), entry(1)]),
    };
    const s = fromData(old)!;
    expect(s.history.map((r) => [r.revision, actorOf(r)])).to.deep.equal([
      ["c2", "reconciler"],
      ["c1", "reconciler"],
    ]);
    expect(appliedBy(s)).to.equal("reconciler");
    expect(s.damagedHistory).to.equal(undefined);
  });

  it(
    "the archive keeps the newest entries within the depth, dropping the oldest first, each " + "reconciliation once",
    () => {
      const stored = [entry(5), entry(4), entry(3), entry(2), entry(1)];
      const next = nextArchive(stored, [entry(6), entry(5)], 4);
      expect(next.map((r) => r.revision)).to.deep.equal(["c6", "c5", "c4", "c3"]);
      expect(mergeEntries([entry(3), entry(2)], [entry(2), entry(1)]).map((r) => r.revision)).to.deep.equal([
        "c3",
        "c2",
        "c1",
      ]);
      // Record order, not clock order: a laptop's clock behind the reconciler's does not reorder the history.
      expect(
        mergeEntries([entry(1, { revision: "newer" })], [entry(9, { revision: "older" })]).map((r) => r.revision),
      ).to.deep.equal(["newer", "older"]);
      expect(archiveDepth(DEFAULT_HISTORY_LIMIT)).to.equal(DEFAULT_HISTORY_LIMIT - HISTORY_LIMIT);
      expect(archiveDepth(HISTORY_LIMIT)).to.equal(0);
    },
  );

  it(
    "the archive drops the oldest entries by bytes as well as by count: 600 entries with 2 KiB messages of 4-byte " +
      "characters stay within the budget",
    () => {
      let archive: Reconciliation[] = [];
      let s: ClusterStatus | undefined;
      for (let i = 1; i <= 600; i++) {
        // A message of emoji: 4 bytes each in UTF-8 (2 UTF-16 units), so the cut message is about 4 KiB.
        s = record(
          s,
          "a",
          "vc-a",
          entry(i, { result: "failed", message: "\u{1F525}".repeat(5000), via: "apply", by: "b".repeat(1000) }),
        );
        if (s.spilled) archive = nextArchive(archive, s.spilled, 100_000);
      }
      expect(bytes(archive)).to.be.at.most(HISTORY_BYTES);
      expect(bytes(archive)).to.be.greaterThan(HISTORY_BYTES - 10_000);
      // The newest that fit, in order, right below the status's own 10: no gap, nothing older kept.
      const newest = 600 - HISTORY_LIMIT;
      expect(archive.map((r) => r.revision)).to.deep.equal(
        Array.from({ length: archive.length }, (_, k) => `c${newest - k}`),
      );
      expect(archive.length).to.be.within(100, 130);
      // A cut never splits a character.
      expect(archive.every((r) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(r.message!))).to.equal(true);
      // The status itself: 10 entries of at most MESSAGE_LIMIT characters each, far below a ConfigMap's 1 MiB.
      expect(Object.values(toData(s!)).reduce((n, v) => n + Buffer.byteLength(v, "utf8"), 0)).to.be.lessThan(
        200 * 1024,
      );
    },
  );
});
