// Mocha reporter: the normal spec output, then the closing line CI reads: "N passed, N failed[, N skipped]".
// With VC_TEST_COUNTS set to a file, the counts are also appended to it as one JSON line (.ci/run adds up the tiers).
"use strict";
const { appendFileSync } = require("node:fs");
const Mocha = require("mocha");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SpecWithTotals extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || {};
      const skipped = s.pending ? `, ${s.pending} skipped` : "";
      process.stdout.write(`${s.passes || 0} passed, ${s.failures || 0} failed${skipped}\n`);
      if (process.env.VC_TEST_COUNTS) {
        appendFileSync(process.env.VC_TEST_COUNTS, `${JSON.stringify({ passed: s.passes || 0, failed: s.failures || 0, skipped: s.pending || 0 })}\n`);
      }
    });
  }
}
module.exports = SpecWithTotals;
