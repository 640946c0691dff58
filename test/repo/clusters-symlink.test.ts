// A clusters/ folder that is itself a symlink (out of the repository) is refused by validation and by the reconciler,
// never followed, and never read as "no clusters" (which would prune the fleet).
import { expect } from "chai";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");

describe("repo: a symlinked clusters/ folder", () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-clusters-link-"));
    cpSync(EXAMPLE, join(tmp, "outside", "clusters"), { recursive: true });
    mkdirSync(join(tmp, "repo"));
    symlinkSync(join(tmp, "outside", "clusters"), join(tmp, "repo", "clusters"));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("vc validate refuses it and reads none of the clusters behind it", async () => {
    const res = await runVc(["validate", join(tmp, "repo")]);
    expect(res.code).to.equal(1);
    expect(res.stdout + res.stderr).to.match(/clusters\/ is a symlink: refused, not followed/);
    expect(res.stdout + res.stderr).to.match(/^0 clusters, 1 error/m);
  });

  it(
    "the reconciler's pass fails instead of reading the folder as empty (nothing applied, nothing " + "pruned)",
    async () => {
      const res = await runVc([
        "reconcile",
        "--once",
        "--repo",
        join(tmp, "repo"),
        "--target",
        `dir:${join(tmp, "out")}`,
      ]);
      expect(res.code).to.not.equal(0);
      expect(res.stdout + res.stderr).to.match(/clusters\/ is a symlink/);
    },
  );
});
