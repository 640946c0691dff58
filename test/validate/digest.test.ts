// The digest of a folder's validation inputs, and the summary a record keeps with it: a summary load takes a folder's
// summary from its record while the digest matches (its bytes, the fleet bases, policy.yaml, the schemas, vc's
// version), and validates it again as soon as one of them changes; a full load always validates.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { DirStatusStore } from "../../src/records/dir-store.js";
import { fromData, toData, type ClusterStatus } from "../../src/records/status.js";
import { parseValidated, sharedInputs, validatedOf, type ValidatedFolder } from "../../src/validate/digest.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { validateFolders } from "../../src/validate/pool.js";
import type { ClusterResult } from "../../src/validate/result.js";

const names = [0, 1, 2].map((i) => fleetClusterName(i));

/** What a reconciler would record of each valid result. */
function recordsOf(results: readonly ClusterResult[]): Map<string, ValidatedFolder> {
  const out = new Map<string, ValidatedFolder>();
  for (const r of results) {
    const v = r.valid && r.settings ? validatedOf(r.digest, r.settings, r.claims) : undefined;
    if (v) out.set(r.name, v);
  }
  return out;
}

describe("validate: the digest of a folder's inputs and the summary its record keeps", function () {
  this.timeout(60_000);
  let root: string;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), "vc-digest-"));
    await generateFleet(root, { clusters: 3, meshPerCluster: 1 });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const summary = (validated: ReadonlyMap<string, ValidatedFolder> | true) =>
    loadAndValidate(root, { detail: "summary", jobs: 1, validated });
  const byName = (rs: readonly ClusterResult[]) => new Map(rs.map((r) => [r.name, r]));

  it("takes a summary from its record while the digest matches; validates again once a byte changed", async () => {
    const first = await summary(true);
    for (const r of first.clusters) {
      expect(r.digest).to.match(/^[0-9a-f]{64}$/);
      expect(r.recorded).to.equal(undefined);
    }
    const records = recordsOf(first.clusters);
    expect([...records.keys()].sort()).to.deep.equal([...names].sort());
    expect(new Set(records.get(names[0]!)!.claims?.map((c) => c.host))).to.deep.equal(new Set(["s0000.example.com"]));
    // A record whose summary says something validation would not: taken as it is while the digest matches.
    const [a, b] = names as [string, string];
    records.set(a, { ...records.get(a)!, settings: { ...records.get(a)!.settings, suspend: true } });
    const second = byName((await summary(records)).clusters);
    expect(second.get(a)).to.include({ recorded: true, valid: true });
    expect(second.get(a)!.settings!.suspend).to.equal(true);
    expect(second.get(b)!.recorded).to.equal(true);
    // One byte of a's values: validated again (what the folder says), b still the record's.
    const values = join(root, "clusters", a, "values.yaml");
    writeFileSync(values, `${readFileSync(values, "utf8")}# a comment\n`);
    const third = byName((await summary(records)).clusters);
    expect(third.get(a)!.recorded).to.equal(undefined);
    expect(third.get(a)!.settings!.suspend).to.equal(false);
    expect(third.get(a)!.digest).to.not.equal(records.get(a)!.digest);
    expect(third.get(b)!.recorded).to.equal(true);
  });

  for (const [what, file, text] of [
    ["policy.yaml", "policy.yaml", "# the fleet's policy\nfolderBudget: {files: 64}\n"],
    ["a fleet base", "fleet/values.yaml", "controlPlane: {}\n"],
  ] as const)
    it(`validates every folder again when ${what} changes (part of every folder's digest)`, async () => {
      const records = recordsOf((await summary(true)).clusters);
      const before = sharedInputs(root);
      mkdirSync(join(root, "fleet"), { recursive: true });
      writeFileSync(join(root, file), text);
      expect(sharedInputs(root)).to.not.equal(before);
      const after = await summary(records);
      expect(after.clusters.map((r) => r.recorded)).to.deep.equal([undefined, undefined, undefined]);
    });

  it("never takes a record's summary for a full load (render needs the spec), nor for an invalid folder", async () => {
    const records = recordsOf((await summary(true)).clusters);
    const full = await loadAndValidate(root, { jobs: 1, validated: records });
    for (const r of full.clusters) {
      expect(r.recorded).to.equal(undefined);
      expect(r.spec).to.not.equal(undefined);
      expect(r.digest).to.equal(records.get(r.name)!.digest);
    }
    writeFileSync(join(root, "clusters", names[1]!, "values.yaml"), "controlPlane: [not, a, mapping]\n");
    const again = byName((await summary(records)).clusters);
    expect(again.get(names[1]!)).to.include({ valid: false });
    expect(recordsOf([...again.values()]).has(names[1]!)).to.equal(false);
  });

  it("hands the records to worker threads too", async () => {
    const records = recordsOf((await summary(true)).clusters);
    const pool = await validateFolders(root, names, {
      jobs: 2,
      detail: "summary",
      workers: "always",
      known: { shared: sharedInputs(root), validated: records },
    });
    expect(pool.byWorkers).to.equal(3);
    expect(pool.results.map((r) => r.recorded)).to.deep.equal([true, true, true]);
  });

  it("is kept on the status as written and read back by both stores; a damaged one is dropped", async () => {
    const [r] = (await summary(true)).clusters;
    const validated = validatedOf(r!.digest, r!.settings!, r!.claims)!;
    const status: ClusterStatus = { cluster: r!.name, hostNamespace: `vc-${r!.name}`, history: [], validated };
    expect(fromData(toData(status))!.validated).to.deep.equal(validated);
    const out = mkdtempSync(join(tmpdir(), "vc-digest-store-"));
    try {
      const store = new DirStatusStore(out);
      await store.write(status);
      expect((await store.read(r!.name))!.validated).to.deep.equal(validated);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    for (const damaged of [
      { ...validated, digest: "not-hex" },
      { ...validated, settings: { namespace: "vc-x" } },
      { ...validated, claims: [{ host: 1 }] },
      "a string",
    ]) {
      expect(parseValidated(damaged)).to.equal(undefined);
      const data = { ...toData(status), validated: JSON.stringify(damaged) };
      expect(fromData(data)!.validated).to.equal(undefined);
    }
  });
});
