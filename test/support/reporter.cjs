// Mocha reporter: the normal spec output, then the closing line CI reads: "N passed, N failed[, N skipped]".
// Tests that never ran because a `before all`/`before each` hook failed count as failed (a hook that lost no test,
// an `after all` one, counts as one failure). NO_COLOR (non-empty) turns colours off.
// With VC_TEST_COUNTS set to a file, the counts are also appended to it as one JSON line (.ci/run adds up the tiers).
"use strict";
const { appendFileSync } = require("node:fs");
const Mocha = require("mocha");
const { Spec, Base } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

if (process.env.NO_COLOR) Base.useColors = false;

/** Every test under a suite, nested suites included. */
function testsUnder(suite) {
  return [...suite.tests, ...suite.suites.flatMap(testsUnder)];
}

/**
 * The closing counts from what ran: tests reported, and the hooks that failed with the tests they kept from running.
 */
function closingCounts(results) {
  const { passed, failedTests, pending, failedHooks, ran, selected } = results;
  let lost = 0;
  const counted = new Set();
  for (const hook of failedHooks) {
    const before = /^"before (all|each)" hook/.test(hook.title);
    const kept =
      before && hook.parent ? testsUnder(hook.parent).filter((t) => !ran.has(t) && !counted.has(t) && selected(t)) : [];
    for (const t of kept) counted.add(t);
    lost += kept.length > 0 ? kept.length : 1;
  }
  return { passed, failed: failedTests + lost, skipped: pending };
}

class SpecWithTotals extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const results = { passed: 0, failedTests: 0, pending: 0, failedHooks: [], ran: new Set(), selected: () => true };
    // A test left out by --grep is not lost to a failed hook.
    results.selected = (t) => {
      if (!runner._grep) return true;
      const match = runner._grep.test(t.fullTitle());
      return runner._invert ? !match : match;
    };
    runner.on(EVENT_TEST_PASS, (t) => {
      results.passed++;
      results.ran.add(t);
    });
    runner.on(EVENT_TEST_PENDING, (t) => {
      results.pending++;
      results.ran.add(t);
    });
    runner.on(EVENT_TEST_FAIL, (t) => {
      if (t.type === "hook") {
        results.failedHooks.push(t);
      } else if (!results.ran.has(t)) {
        results.failedTests++;
        results.ran.add(t);
      }
    });
    runner.once(EVENT_RUN_END, () => {
      const c = closingCounts(results);
      const skipped = c.skipped ? `, ${c.skipped} skipped` : "";
      process.stdout.write(`${c.passed} passed, ${c.failed} failed${skipped}\n`);
      if (process.env.VC_TEST_COUNTS) {
        appendFileSync(process.env.VC_TEST_COUNTS, `${JSON.stringify(c)}\n`);
      }
    });
  }
}
module.exports = SpecWithTotals;
module.exports.closingCounts = closingCounts;
