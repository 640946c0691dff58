// The closing line of our mocha reporter: tests a failed `before all`/`before each` hook kept from running count as
// failed (never as nothing), the counts file .ci/run adds up, and NO_COLOR.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");
const MOCHA = join(ROOT, "node_modules/mocha/bin/mocha.js");

function runFixture(extra: string[], env: NodeJS.ProcessEnv) {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.VC_TEST_COUNTS;
  delete base.NO_COLOR;
  return spawnSync(
    process.execPath,
    [MOCHA, "--no-config", "--reporter", "test/support/reporter.cjs", ...extra, "test/fixtures/reporter/hooks.cjs"],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...base, ...env },
    },
  );
}

describe("the test reporter", function () {
  this.timeout(60000);

  it(
    "counts the tests of a failed before-all or before-each hook as failed, an after-all hook's " + "failure as one",
    () => {
      const tmp = mkdtempSync(join(tmpdir(), "vc-reporter-"));
      try {
        const counts = join(tmp, "counts");
        const r = runFixture([], { VC_TEST_COUNTS: counts, NO_COLOR: "1" });
        expect(r.status).to.not.equal(0);
        // passed: d, g, h; failed: a, b, c (before all), e, f (before each), the after-all hook, i; skipped: j.
        expect(r.stdout.trimEnd().split("\n").at(-1)).to.equal("3 passed, 7 failed, 1 skipped");
        expect(JSON.parse(readFileSync(counts, "utf8"))).to.deep.equal({ passed: 3, failed: 7, skipped: 1 });
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  );

  it("with --grep, counts only the selected tests a failed hook kept from running", () => {
    const r = runFixture(["--grep", "before all fails"], { NO_COLOR: "1" });
    expect(r.stdout.trimEnd().split("\n").at(-1)).to.equal("0 passed, 3 failed");
  });

  it("prints no colour codes with NO_COLOR, even where colours are forced", () => {
    const ansi = /\u001b\[/;
    expect(runFixture([], { FORCE_COLOR: "1" }).stdout).to.match(ansi);
    expect(runFixture([], { FORCE_COLOR: "1", NO_COLOR: "1" }).stdout).to.not.match(ansi);
  });
});
