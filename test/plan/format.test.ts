import { expect } from "chai";
import { buildPlan } from "../../src/plan/build.js";
import { formatPlanReport, planReportData, summaryLine, useColour, writePlanReport } from "../../src/plan/format.js";
import { load } from "js-yaml";
import { dataYaml } from "../../src/model/data-yaml.js";
import { jsonEscapeControls } from "../../src/model/escape.js";
import { asLive, clusterObjects } from "./fixtures.js";

function samplePlan() {
  const desired = clusterObjects("a");
  const live = desired.map((o) => asLive(o));
  desired.find((o) => o.kind === "ConfigMap")!.data = { a: "2" };
  return buildPlan(
    "a",
    desired.filter((o) => o.kind !== "VirtualService"),
    [...live],
    { prune: true, allowMassPrune: false },
  );
}

describe("plan/format", () => {
  it("prints a summary line per cluster and in total, the diff of each change, no colour unless asked", () => {
    const out = formatPlanReport(
      {
        plans: [samplePlan(), buildPlan("b", clusterObjects("b"), [], { prune: false, allowMassPrune: false })],
        errors: [{ cluster: "c", message: "values.yaml:3:1: bad" }],
      },
      "text",
    );
    expect(out).to.include("cluster a: 0 to create, 1 to update, 1 to delete, 4 unchanged");
    expect(out).to.include("cluster b: 6 to create, 0 to update, 0 to delete, 0 unchanged");
    expect(out)
      .to.include("~ update ConfigMap vc-a/a-config")
      .and.include("- delete VirtualService vc-a/r-x-default-x-a");
    expect(out).to.include("! cluster c: values.yaml:3:1: bad");
    expect(out.trimEnd().split("\n").at(-1)).to.equal("6 to create, 1 to update, 1 to delete, 4 unchanged");
    expect(out).to.not.match(/\x1b\[/);
    expect(formatPlanReport({ plans: [samplePlan()], errors: [] }, "text", { colour: true })).to.match(/\x1b\[3\dm/);
  });

  it("gives JSON with counts, changes and diffs", () => {
    const data = JSON.parse(formatPlanReport({ plans: [samplePlan()], errors: [] }, "json"));
    expect(data.summary).to.deep.equal({ create: 0, update: 1, delete: 1, unchanged: 4 });
    expect(
      data.clusters[0].changes.map((c: { action: string; kind: string }) => `${c.action} ${c.kind}`),
    ).to.deep.equal(["update ConfigMap", "delete VirtualService"]);
    expect(data.clusters[0].changes[0].diff).to.include("+  a: '2'");
  });

  it("gives markdown for a pull-request comment with diff blocks and the prune guard message", () => {
    const blocked = buildPlan(
      "a",
      [],
      clusterObjects("a").map((o) => asLive(o)),
      { prune: true, allowMassPrune: false },
    );
    const md = formatPlanReport({ plans: [samplePlan(), blocked], errors: [] }, "markdown");
    expect(md).to.match(/^### vc plan\n\n\*\*0 to create, 1 to update, 6 to delete, 4 unchanged\*\*/);
    expect(md).to.include("> kept Namespace vc-a: namespaces are never pruned");
    expect(md)
      .to.include("<summary>update ConfigMap vc-a/a-config</summary>")
      .and.include("```diff\n--- live/ConfigMap vc-a/a-config");
    expect(md).to.include(":warning: prune guard: cluster a would delete all 6");
  });

  it(
    "writes text, JSON and YAML in pieces that join to the whole report: its data serialised whole, control " +
      "characters escaped",
    () => {
      const many = Array.from({ length: 300 }, (_, i) => clusterObjects(`c${i}`)).map((objs, i) =>
        buildPlan(`c${i}`, objs, [], { prune: false, allowMassPrune: false }),
      );
      const odd = samplePlan();
      odd.changes[0]!.diff = `${odd.changes[0]!.diff}+  note: "bell \u0007 and \u001b[31m"\n`;
      // Block scalars as YAML writes them inside a sequence: an empty line, a first line that starts with spaces (an
      // indentation indicator), a bidi override, a document marker and a line that looks like a top-level key.
      const blocks = samplePlan();
      blocks.changes[0]!.diff = "  first line indented\n\nclusters: vc-plan-report-clusters\n---\n+ \u202e reversed\n";
      blocks.changes[1]!.diff = "line\n\n\nafter two empty lines\n";
      const reports = [
        { plans: [samplePlan()], errors: [] },
        { plans: [], errors: [{ cluster: "x", message: "bad \u0007" }] },
        {
          plans: [odd, ...many],
          errors: [{ cluster: "c", message: "values.yaml:3:1: bad" }],
          held: { c1: "held by rollout r: wave 1/2" },
          suspendedAtRunTime: [{ cluster: "s", by: "ops" }],
        },
        {
          plans: [blocks, odd],
          errors: [{ cluster: "clusters: vc-plan-report-clusters", message: "a\nclusters: vc-plan-report-clusters\n" }],
        },
      ];
      for (const report of reports) {
        const pieces: string[] = [];
        writePlanReport(report, "json", (t) => pieces.push(t));
        expect(pieces.join("")).to.equal(`${jsonEscapeControls(JSON.stringify(planReportData(report), null, 2))}\n`);
        expect(pieces.join("")).to.equal(formatPlanReport(report, "json"));
        const text: string[] = [];
        writePlanReport(report, "text", (t) => text.push(t));
        expect(text.join("")).to.equal(formatPlanReport(report, "text"));
        const yaml: string[] = [];
        writePlanReport(report, "yaml", (t) => yaml.push(t));
        expect(yaml.join("")).to.equal(dataYaml(planReportData(report)));
        expect(load(yaml.join(""))).to.deep.equal(JSON.parse(JSON.stringify(planReportData(report))));
        if (report.plans.length > 100) expect(pieces.length).to.be.greaterThan(3);
        if (report.plans.length > 100) expect(text.length).to.be.greaterThan(3);
        if (report.plans.length > 100) expect(yaml.length).to.be.greaterThan(3);
      }
    },
  );

  it("keeps markdown under GitHub's comment limit", () => {
    const many = Array.from({ length: 300 }, (_, i) => clusterObjects(`c${i}`)).map((objs, i) =>
      buildPlan(`c${i}`, objs, [], { prune: false, allowMassPrune: false }),
    );
    const md = formatPlanReport({ plans: many, errors: [] }, "markdown");
    expect(md.length).to.be.below(65_536);
    expect(md).to.match(/diffs omitted/);
    expect(summaryLine({ create: 1, update: 2, delete: 3, unchanged: 4 })).to.equal(
      "1 to create, 2 to update, 3 to delete, 4 unchanged",
    );
  });

  it("uses colour only on a TTY and never with NO_COLOR", () => {
    const saved = process.env.NO_COLOR;
    try {
      delete process.env.NO_COLOR;
      expect(useColour({ isTTY: true })).to.equal(true);
      expect(useColour({ isTTY: false })).to.equal(false);
      expect(useColour({})).to.equal(false);
      process.env.NO_COLOR = "1";
      expect(useColour({ isTTY: true })).to.equal(false);
    } finally {
      if (saved === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = saved;
    }
  });
});
