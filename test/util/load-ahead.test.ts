// loadAhead loads the next item while the caller works on the current one, in order, never more than one ahead; a
// failed load is thrown where the caller reaches it, and one loaded ahead of a caller that stopped is no unhandled
// rejection. chunksOf cuts a list in runs.
import { expect } from "chai";
import { chunksOf, loadAhead } from "../../src/util/pool.js";

/** A load whose end the test decides: each call is recorded, and resolves (or fails) when told. */
function controlledLoads() {
  const started: number[] = [];
  const pending = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const load = (item: number): Promise<string> => {
    started.push(item);
    return new Promise<string>((resolve, reject) => pending.set(item, { resolve, reject }));
  };
  return { started, pending, load };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("util/pool loadAhead", () => {
  it("loads item k+1 while the caller holds item k, and never two ahead", async () => {
    const { started, pending, load } = controlledLoads();
    const it = loadAhead([1, 2, 3], load);
    const first = it.next();
    await turn();
    expect(started).to.deep.equal([1]); // nothing ahead before the first is loaded
    pending.get(1)!.resolve("one");
    expect((await first).value).to.deep.equal([1, "one"]);
    expect(started).to.deep.equal([1, 2]); // the second loads while the caller works on the first
    await turn();
    expect(started).to.deep.equal([1, 2]); // and not the third
    pending.get(2)!.resolve("two");
    expect((await it.next()).value).to.deep.equal([2, "two"]);
    expect(started).to.deep.equal([1, 2, 3]);
    pending.get(3)!.resolve("three");
    expect((await it.next()).value).to.deep.equal([3, "three"]);
    expect((await it.next()).done).to.equal(true);
  });

  it("gives every item in order when loads end out of order", async () => {
    const seen: Array<[number, number]> = [];
    for await (const pair of loadAhead(
      [30, 1, 20, 2],
      (n) => new Promise<number>((r) => setTimeout(() => r(n * 10), n)),
    ))
      seen.push(pair);
    expect(seen).to.deep.equal([
      [30, 300],
      [1, 10],
      [20, 200],
      [2, 20],
    ]);
  });

  it("throws a failed load where the caller reaches it, after the items before it", async () => {
    const seen: number[] = [];
    let caught: unknown;
    try {
      for await (const [n] of loadAhead([1, 2, 3], async (n) => {
        if (n === 2) throw new Error("chunk 2 does not render");
        return n;
      })) {
        seen.push(n);
      }
    } catch (err) {
      caught = err;
    }
    expect(seen).to.deep.equal([1]);
    expect((caught as Error).message).to.equal("chunk 2 does not render");
  });

  it("lets a load ahead of a caller that stopped fail without an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { pending, load } = controlledLoads();
      const it = loadAhead([1, 2], load);
      const first = it.next();
      pending.get(1)!.resolve("one");
      await first;
      await it.return(undefined); // the caller stops (an apply failed) while item 2 is loading
      pending.get(2)!.reject(new Error("rendered for nobody"));
      await turn();
      await turn();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).to.deep.equal([]);
  });

  it("loads nothing for no items", async () => {
    let loads = 0;
    for await (const _ of loadAhead([], async () => ++loads)) expect.fail("no item");
    expect(loads).to.equal(0);
  });
});

describe("util/pool chunksOf", () => {
  it("cuts a list in runs of the size, the last one shorter", () => {
    expect(chunksOf([1, 2, 3, 4, 5], 2)).to.deep.equal([[1, 2], [3, 4], [5]]);
    expect(chunksOf([1, 2], 5)).to.deep.equal([[1, 2]]);
    expect(chunksOf([], 3)).to.deep.equal([]);
  });
});
