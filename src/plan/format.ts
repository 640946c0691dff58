// Prints plans for people and machines: text (colour on a TTY), JSON, YAML, and markdown for a pull-request comment.
import { styleText } from "node:util";
import { describeRef } from "../kube/object.js";
import { dataYaml, sequenceItemYaml } from "../model/data-yaml.js";
import { escapeControls as e, escapeLines, jsonEscapeControls } from "../model/escape.js";
import { emptyCounts } from "./build.js";
import type { Action, Plan, PlannedChange } from "./types.js";
import { fleetSummaryLine, summariseFleet } from "./fleet-summary.js";

export type PlanFormat = "text" | "json" | "markdown" | "yaml";
export const PLAN_FORMATS: readonly PlanFormat[] = ["text", "json", "markdown", "yaml"];

/** A cluster that could not be planned (invalid folder, render or read failure). */
export interface ClusterError {
  cluster: string;
  message: string;
}

/** A cluster an operation (`vc restore`) suspended at run time: neither planned nor applied. */
export interface SuspendedCluster {
  cluster: string;
  /** Who and why: the value of the `vc.orch.io/suspended-by` annotation on its status ConfigMap. */
  by: string;
}

export interface PlanReport {
  plans: Plan[];
  errors: ClusterError[];
  /** Clusters left out of the plan because they are suspended at run time. */
  suspendedAtRunTime?: SuspendedCluster[];
  /**
   * Clusters planned at the base a rollout pins them to, and why (`held by rollout <id>: wave 2/3 (early)`):
   * docs/rollouts.md.
   */
  held?: Record<string, string>;
}

/** How plans and apply reports name a cluster suspended at run time. */
export function suspendedAtRunTimeNote(s: SuspendedCluster): string {
  return `suspended by ${s.by} (run-time)`;
}

/** GitHub refuses comments over 65,536 characters; diffs beyond this budget are summarised. */
const MARKDOWN_BUDGET = 60_000;

const VERB: Record<Action, string> = { create: "create", update: "update", delete: "delete", unchanged: "unchanged" };
const SIGN: Record<Action, string> = { create: "+", update: "~", delete: "-", unchanged: "=" };

export function summaryLine(counts: Record<Action, number>): string {
  return (
    `${counts.create} to create, ${counts.update} to update, ${counts.delete} to delete, ${counts.unchanged} ` +
    `unchanged`
  );
}

export function totalCounts(plans: readonly Plan[]): Record<Action, number> {
  const total = emptyCounts();
  for (const p of plans) for (const a of Object.keys(total) as Action[]) total[a] += p.counts[a];
  return total;
}

/** True when colour should be used on a stream: a TTY and no NO_COLOR. */
export function useColour(stream: { isTTY?: boolean }): boolean {
  return !!stream.isTTY && !process.env.NO_COLOR;
}

export function formatPlanReport(report: PlanReport, format: PlanFormat, opts: { colour?: boolean } = {}): string {
  const parts: string[] = [];
  writePlanReport(report, format, (s) => parts.push(s), opts);
  return parts.join("");
}

/** Output written in pieces of about this size (a fleet's report is never one string). */
const WRITE_PIECE = 64 * 1024;

/**
 * Writes the report as formatPlanReport formats it, in pieces: text, JSON and YAML a cluster at a time (the report of a
 * fleet's first diff is as large as its YAML, and its diffs may be read back from a file, plan/spill.ts), markdown
 * whole (it is bounded by its budget).
 */
export function writePlanReport(
  report: PlanReport,
  format: PlanFormat,
  write: (text: string) => void,
  opts: { colour?: boolean } = {},
): void {
  if (format === "markdown") return write(toMarkdown(report));
  let pending: string[] = [];
  let size = 0;
  const put = (text: string) => {
    pending.push(text);
    size += text.length;
    if (size >= WRITE_PIECE) flush();
  };
  const flush = () => {
    if (pending.length > 0) write(pending.join(""));
    pending = [];
    size = 0;
  };
  if (format === "json") writeJson(report, put);
  else if (format === "yaml") writeYaml(report, put);
  else writeText(report, opts.colour ?? false, put);
  flush();
}

/** The report as data: what `-o json` and `-o yaml` print. */
export function planReportData(report: PlanReport): unknown {
  return toJson(report);
}

function toJson(report: PlanReport): unknown {
  return jsonWithout(report, report.plans.map(clusterJson));
}

/** The report's data with `clusters` as given (the cluster entries, or a stand-in for them). */
function jsonWithout(report: PlanReport, clusters: unknown): Record<string, unknown> {
  const fleet = summariseFleet(report.plans);
  return {
    summary: totalCounts(report.plans),
    ...(report.held ? { held: report.held } : {}),
    changes: {
      clusters: fleet.changed,
      groups: fleet.groups.map((g) => ({ change: g.change, count: g.clusters.length, clusters: g.clusters })),
    },
    clusters,
    suspendedAtRunTime: report.suspendedAtRunTime ?? [],
    errors: report.errors,
  };
}

/** One cluster's entry of the report's data. */
function clusterJson(p: Plan): unknown {
  return {
    cluster: p.cluster,
    counts: p.counts,
    ...(p.blocked ? { blocked: p.blocked } : {}),
    ...(p.retained ? { retained: p.retained.map((r) => ({ ...r.ref, reason: r.reason })) } : {}),
    changes: p.changes
      .filter((c) => c.action !== "unchanged")
      .map((c) => ({
        action: c.action,
        apiVersion: c.ref.apiVersion,
        kind: c.ref.kind,
        namespace: c.ref.namespace,
        name: c.ref.name,
        ...(c.immutable ? { immutable: c.immutable, recreate: !!c.recreate } : {}),
        diff: c.diff ?? "",
      })),
  };
}

/** The text JSON.stringify(toJson(report), null, 2) gives, control characters escaped, written a cluster at a time. */
function writeJson(report: PlanReport, put: (text: string) => void): void {
  // The stand-in's key is the only one indented by two spaces and followed by the stand-in.
  const whole = jsonEscapeControls(JSON.stringify(jsonWithout(report, CLUSTERS_STAND_IN), null, 2));
  spliceClusters(whole, `\n  "clusters": ${JSON.stringify(CLUSTERS_STAND_IN)}`, put, () => {
    if (report.plans.length === 0) return put(`\n  "clusters": []`);
    put(`\n  "clusters": [\n`);
    report.plans.forEach((p, i) =>
      put(`${i > 0 ? ",\n" : ""}${jsonEscapeControls(JSON.stringify(clusterJson(p), null, 2)).replace(/^/gm, "    ")}`),
    );
    put("\n  ]");
  });
  put("\n");
}

/** The text dataYaml(toJson(report)) gives, written a cluster at a time. */
function writeYaml(report: PlanReport, put: (text: string) => void): void {
  // Top-level keys alone start a line without indentation (nested values, block scalars and quoted strings are
  // indented or on their key's line), and `clusters` is never the first of the sorted keys (`changes` is before it).
  const whole = dataYaml(jsonWithout(report, CLUSTERS_STAND_IN));
  spliceClusters(whole, `\nclusters: ${CLUSTERS_STAND_IN}\n`, put, () => {
    if (report.plans.length === 0) return put("\nclusters: []\n");
    put("\nclusters:\n");
    for (const p of report.plans) put(sequenceItemYaml(clusterJson(p)));
  });
}

/**
 * Where the clusters go in the rest of the report, serialised: a string no value of the report can be where it stands.
 */
const CLUSTERS_STAND_IN = "vc-plan-report-clusters";

/** Puts `whole` with what `clusters` puts in place of `marker` (the stand-in's key and value, found once). */
function spliceClusters(whole: string, marker: string, put: (text: string) => void, clusters: () => void): void {
  const at = whole.indexOf(marker);
  if (at < 0) throw new Error("internal error: the plan report has no clusters to write");
  put(whole.slice(0, at));
  clusters();
  put(whole.slice(at + marker.length));
}

type Style = Parameters<typeof styleText>[0];

/** styleText without its own TTY check (Node 20.20 skips colour when stdout is not a TTY): the caller decides. */
export function paint(style: Style, text: string): string {
  return (styleText as (f: Style, t: string, o: { validateStream: boolean }) => string)(style, text, {
    validateStream: false,
  });
}

function colourDiff(diff: string, colour: boolean): string {
  if (!colour) return diff;
  return diff
    .split("\n")
    .map((line) => {
      if (line.startsWith("+++") || line.startsWith("---")) return paint("bold", line);
      if (line.startsWith("@@")) return paint("cyan", line);
      if (line.startsWith("+")) return paint("green", line);
      if (line.startsWith("-")) return paint("red", line);
      return line;
    })
    .join("\n");
}

/** After an update the server refuses in place: which immutable fields, and whether vc recreates the object. */
function refusedNote(c: PlannedChange): string {
  if (!c.immutable) return "";
  return c.recreate
    ? ` (recreate: immutable ${c.immutable.join(", ")})`
    : ` (refused in place: immutable ${c.immutable.join(", ")}; needs --force)`;
}

/**
 * The text report, a line at a time (each with its newline). Names, reasons and messages may come from the host:
 * escaped (model/escape.ts) before any colour is added.
 */
function writeText(report: PlanReport, colour: boolean, put: (text: string) => void): void {
  const line = (...lines: string[]) => {
    for (const l of lines) put(`${l}\n`);
  };
  const style = (st: Style, s: string) => (colour ? paint(st, s) : s);
  // A change reaching many clusters (a base) is summarised before the per-cluster detail.
  const fleetLine = fleetSummaryLine(summariseFleet(report.plans));
  if (fleetLine) line(style("bold", fleetLine), "");
  for (const p of report.plans) {
    line(style("bold", `cluster ${e(p.cluster)}: ${summaryLine(p.counts)}`));
    for (const c of p.changes) {
      if (c.action === "unchanged") continue;
      const st = c.action === "create" ? "green" : c.action === "delete" ? "red" : "yellow";
      line(style(st, `${SIGN[c.action]} ${VERB[c.action]} ${e(describeRef(c.ref))}${e(refusedNote(c))}`));
      const diff = c.diff; // read once: a spilled diff is read from its file (plan/spill.ts)
      if (diff) line(colourDiff(escapeLines(diff), colour).replace(/\n$/, ""));
    }
    for (const r of p.retained ?? []) line(style("yellow", `= keep ${e(describeRef(r.ref))}: ${e(r.reason)}`));
    if (p.blocked) line(style("red", `! ${e(p.blocked)}`));
  }
  for (const s of report.suspendedAtRunTime ?? [])
    line(
      style(
        "yellow",
        `cluster ${e(s.cluster)}: ${e(suspendedAtRunTimeNote(s))}, not planned: vc apply leaves it alone`,
      ),
    );
  for (const x of report.errors) line(style("red", `! cluster ${e(x.cluster)}: ${escapeLines(x.message)}`));
  line(summaryLine(totalCounts(report.plans)));
}

function toMarkdown(report: PlanReport): string {
  const head: string[] = ["### vc plan", "", `**${summaryLine(totalCounts(report.plans))}**`, ""];
  const fleet = summariseFleet(report.plans);
  if (fleetSummaryLine(fleet)) {
    head.push(`Changes ${fleet.changed} clusters:`, "");
    for (const g of fleet.groups.slice(0, 20))
      head.push(
        `- ${g.clusters.length} × ` +
          `${escapeMd(g.change)}${g.clusters.length <= 5 ? ` (${g.clusters.map((c) => `\`${c}\``).join(", ")})` : ""}`,
      );
    if (fleet.groups.length > 20) head.push(`- … ${fleet.groups.length - 20} more kinds of change`);
    head.push("");
  }
  for (const [c, why] of Object.entries(report.held ?? {}))
    head.push(`> :hourglass: cluster \`${c}\`: ${escapeMd(why)}`, "");
  for (const s of report.suspendedAtRunTime ?? [])
    head.push(
      `> :pause_button: cluster \`${s.cluster}\`: ${escapeMd(suspendedAtRunTimeNote(s))}, not planned: vc apply ` +
        `leaves it alone`,
      "",
    );
  for (const e of report.errors) head.push(`> :x: cluster \`${e.cluster}\`: ${escapeMd(e.message)}`, "");
  const body: string[] = [];
  let budget = MARKDOWN_BUDGET - head.join("\n").length;
  let omittedDiffs = 0;
  let omittedClusters = 0;
  const take = (lines: string[]): boolean => {
    const size = lines.join("\n").length + 1;
    if (size > budget) return false;
    budget -= size;
    body.push(...lines);
    return true;
  };
  // Clusters with changes first (blocked ones before them), unchanged clusters last: what a reviewer needs comes first.
  const weight = (p: Plan) => (p.blocked ? 0 : p.counts.create + p.counts.update + p.counts.delete > 0 ? 1 : 2);
  const plans = [...report.plans].sort((a, b) => weight(a) - weight(b));
  for (const p of plans) {
    const changed = p.changes.filter((c) => c.action !== "unchanged");
    const header = [`#### cluster \`${p.cluster}\`: ${summaryLine(p.counts)}`, ""];
    if (p.blocked) header.push(`> :warning: ${escapeMd(p.blocked)}`, "");
    for (const r of p.retained ?? []) header.push(`> kept ${escapeMd(describeRef(r.ref))}: ${escapeMd(r.reason)}`, "");
    if (changed.length === 0) header.push("No changes.", "");
    // Reserve room for the closing note so it always fits.
    if (!take(header) || budget < 200) {
      omittedClusters++;
      continue;
    }
    for (const c of changed) {
      const title = `${VERB[c.action]} ${describeRef(c.ref)}${refusedNote(c)}`;
      const block = [
        "<details>",
        `<summary>${escapeHtml(title)}</summary>`,
        "",
        "```diff",
        (c.diff ?? "").replace(/\n$/, ""),
        "```",
        "</details>",
        "",
      ];
      if (budget - 300 < block.join("\n").length || !take(block)) {
        omittedDiffs++;
        if (budget > 300) take([`- ${escapeMd(title)}`]);
      }
    }
    body.push("");
  }
  const notes: string[] = [];
  if (omittedDiffs)
    notes.push(
      `_${omittedDiffs} diffs omitted to keep the comment under GitHub's size limit; run \`vc diff\` to see them._`,
    );
  if (omittedClusters)
    notes.push(`_${omittedClusters} clusters omitted (see the summary line above); run \`vc diff\` to see them._`);
  return `${[...head, ...body, ...notes]
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n+$/, "")}\n`;
}

function escapeHtml(s: string): string {
  return e(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeMd(s: string): string {
  return e(s).replace(/([\\`*_[\]<>|])/g, "\\$1");
}
