// vc apply --wait refuses what it cannot wait for: a dry run, a dir: target, a timeout that is no duration.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";

describe("cli: vc apply --wait", () => {
  let out: string;
  before(() => (out = mkdtempSync(join(tmpdir(), "vc-wait-"))));
  after(() => rmSync(out, { recursive: true, force: true }));

  it("refuses --dry-run, a dir: target and a bad --timeout with a usage error, writing nothing", async () => {
    const dry = await runVc(["apply", ".", "--wait", "--dry-run", "--target", `dir:${out}/a`]);
    expect(dry.code).to.equal(2);
    expect(dry.stderr).to.include("cannot be used with --dry-run");
    const dir = await runVc(["apply", ".", "--wait", "--target", `dir:${out}/b`]);
    expect(dir.code).to.equal(2);
    expect(dir.stderr).to.include("--wait needs a live host (--target kube)");
    const bad = await runVc(["apply", ".", "--wait", "--timeout", "soon", "--target", `dir:${out}/c`]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('invalid duration "soon"');
    expect(await import("node:fs").then((fs) => fs.readdirSync(out))).to.deep.equal([]);
  });
});
