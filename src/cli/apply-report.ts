// The report of `vc apply` (and `vc adopt`) as text, JSON or YAML, written as the run goes; progress on stderr.
import { shortRevision } from "../git/dirty.js";
import { recordedName } from "../host/identity.js";
import { describeRef } from "../kube/object.js";
import { sequenceItemYaml } from "../model/data-yaml.js";
import { escapeControls, jsonEscapeControls } from "../model/escape.js";
import type { WaitOutcome } from "../health/wait.js";
import type { FleetApplyReport } from "../pipeline/fleet.js";
import type { RunRecord } from "../pipeline/record-run.js";
import { paint, suspendedAtRunTimeNote } from "../plan/format.js";
import { OUTCOMES, type ObjectResult, type Outcome, type SyncResult } from "../plan/types.js";
import { recordsNamespace } from "../translate/keys.js";
import { EXIT, formatData } from "./common.js";

/** Progress lines on stderr at most once a second, only for runs with this many changes or more. */
const PROGRESS_MIN_CHANGES = 100;

/** Exit status 1 and the error line when a wait did not end healthy; undefined otherwise. */
export function waitedCode(waited: WaitOutcome | undefined, timeout: string): number | undefined {
  if (!waited || waited.result === "healthy") return undefined;
  process.stderr.write(
    waited.result === "degraded"
      ? `error: cluster ${waited.cluster} is Degraded: ${escapeControls(waited.reason ?? "")}\n`
      : `error: timed out after ${timeout} waiting for cluster ${waited.cluster} ` +
          `(${escapeControls(waited.reason ?? "")})\n`,
  );
  return EXIT.invalid;
}

/** The health each waited-for cluster ended with, and how the wait ended. */
function waitJson(w: WaitOutcome): unknown {
  const health = Object.fromEntries(
    [...w.health].map(([c, h]) => [c, { status: h.status, ...(h.reason ? { reason: h.reason } : {}) }]),
  );
  return w.result === "healthy"
    ? { result: w.result, health }
    : { result: w.result, cluster: w.cluster, reason: w.reason, health };
}

function waitText(w: WaitOutcome, timeout: string): string {
  const lines = [...w.health].map(([c, h]) => `cluster ${c}: ${h.status}${h.reason ? ` (${h.reason})` : ""}`);
  if (w.result === "healthy") lines.push(`every applied cluster is Healthy`);
  else if (w.result === "timeout") lines.push(`not every applied cluster became Healthy within ${timeout}`);
  return `${lines.join("\n")}\n`;
}

export function progressPrinter(suffix: () => string = () => "") {
  let last = 0;
  let shown = false;
  const tty = !!process.stderr.isTTY;
  return {
    update(done: number, total: number, cluster: string) {
      if (total < PROGRESS_MIN_CHANGES) return;
      const now = Date.now();
      if (now - last < 1000 && done < total) return;
      last = now;
      shown = true;
      const line =
        `progress: ${done}/${total} objects (${Math.floor((done * 100) / total)}%), cluster ` + `${cluster}${suffix()}`;
      process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    },
    end() {
      if (shown && tty) process.stderr.write("\n");
    },
  };
}

const PAST: Record<Outcome, string> = {
  created: "created",
  updated: "updated",
  deleted: "deleted",
  unchanged: "unchanged",
  failed: "failed",
  skipped: "skipped",
};

/** A dry run's words: what would happen, never a line that reads as done. */
const WOULD: Record<Outcome, string> = {
  created: "would create",
  updated: "would update",
  deleted: "would delete",
  unchanged: "unchanged",
  failed: "would fail",
  skipped: "would skip",
};
const WOULD_COUNT: Record<Outcome, string> = {
  created: "to create",
  updated: "to update",
  deleted: "to delete",
  unchanged: "unchanged",
  failed: "refused",
  skipped: "to skip",
};

function outcomeLine(counts: Record<Outcome, number>, dryRun = false): string {
  return OUTCOMES.map((o) => `${counts[o]} ${(dryRun ? WOULD_COUNT : PAST)[o]}`).join(", ");
}

/**
 * The text report. Every line may carry host text (names, server messages): escaped (model/escape.ts) before any colour
 * is added.
 */
export function toText(
  report: FleetApplyReport,
  dryRun: boolean,
  colour: boolean,
  run?: RunRecord,
  command = "vc apply",
): string {
  const style = styler(colour);
  const out = report.results.flatMap((r) => clusterLines(r, dryRun, style));
  out.push(...tailLines(report, dryRun, style, run, command));
  return `${out.join("\n")}\n`;
}

type Style = (st: Parameters<typeof paint>[0] | undefined, s: string) => string;

function styler(colour: boolean): Style {
  return (st, s) => (colour && st ? paint(st, escapeControls(s)) : escapeControls(s));
}

/** One cluster's lines of the text report: what changed, its counts, what was kept and what blocked it. */
function clusterLines(r: SyncResult, dryRun: boolean, style: Style): string[] {
  const out: string[] = [];
  // A blocked cluster's objects are all skipped for the one reason printed below: no line each.
  for (const res of r.results)
    if (res.outcome !== "unchanged" && !(r.plan.blocked && res.outcome === "skipped"))
      out.push(resultLine(res, style, dryRun));
  out.push(
    style(
      "bold",
      `cluster ${r.cluster}: ${outcomeLine(r.counts, dryRun)}${dryRun ? ` (dry run${uncheckedNote(r.results)})` : ""}`,
    ),
  );
  for (const k of r.plan.retained ?? []) out.push(style("yellow", `kept ${describeRef(k.ref)}: ${k.reason}`));
  if (r.plan.blocked) out.push(style("red", `! ${r.plan.blocked}`));
  return out;
}

/** The text report's lines after the clusters': suspended clusters, errors, the record and the totals. */
function tailLines(
  report: FleetApplyReport,
  dryRun: boolean,
  style: Style,
  run: RunRecord | undefined,
  command: string,
): string[] {
  const out: string[] = [];
  const total = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of report.results) for (const o of OUTCOMES) total[o] += r.counts[o];
  for (const name of report.suspended)
    out.push(style(undefined, `cluster ${name}: suspended in cluster.yaml, left alone`));
  for (const s of report.suspendedAtRunTime)
    out.push(
      style(
        "yellow",
        `cluster ${s.cluster}: ${suspendedAtRunTimeNote(s)}, left alone; ${command} --ignore-suspension to ` +
          `apply anyway`,
      ),
    );
  for (const e of report.errors) out.push(style("red", `! cluster ${e.cluster}: ${e.message}`));
  for (const b of report.busy ?? []) out.push(style("red", `! ${b.message}`));
  if (run) out.push(...recordLines(report, run, style));
  out.push(`${outcomeLine(total, dryRun)}${dryRun ? " (dry run: nothing was changed)" : ""}`);
  return out;
}

/** `; N not checked by the server: namespace X does not exist yet` for a dry run's unchecked creates. */
function uncheckedNote(results: readonly ObjectResult[]): string {
  const unchecked = results.filter((r) => r.checked === false);
  if (unchecked.length === 0) return "";
  const namespaces = [...new Set(unchecked.map((r) => r.ref.namespace))].sort().join(", ");
  return `; ${unchecked.length} not checked by the server: namespace ${namespaces} does not exist yet`;
}

/** What went on the record; a cluster whose record failed, or whose status another owner holds, says so. */
function recordLines(report: FleetApplyReport, run: RunRecord, style: Style): string[] {
  const out: string[] = [];
  const blockedByOwner = new Set(report.results.filter((r) => r.plan.ownerConflict).map((r) => r.cluster));
  for (const c of run.clusters) {
    if (c.outcome === "failed")
      out.push(
        style(
          "red",
          `! cluster ${c.cluster}: applied, but its record could not be written: ${c.message} (vc needs get, ` +
            `create and patch on ConfigMaps in the records namespace ${recordsNamespace()})`,
        ),
      );
    else if (c.outcome === "not-owned" && !blockedByOwner.has(c.cluster))
      out.push(style("yellow", `cluster ${c.cluster}: not recorded: ${c.message}`));
  }
  const recorded = run.clusters.filter((c) => c.outcome === "recorded" || c.outcome === "forgotten").length;
  if (recorded > 0 && run.actor)
    out.push(
      style(
        undefined,
        `recorded ${recorded} cluster(s) at revision ${shortRevision(run.revision)} by ${recordedName(run.actor)} ` +
          `(${run.actor.from})`,
      ),
    );
  return out;
}

function resultLine(r: ObjectResult, style: Style, dryRun = false): string {
  if (r.checked === false) return style("yellow", `${describeRef(r.ref)} ${r.message}`);
  const colour =
    r.outcome === "failed" ? "red" : r.outcome === "deleted" ? "red" : r.outcome === "skipped" ? "yellow" : "green";
  return style(
    colour,
    `${(dryRun ? WOULD : PAST)[r.outcome]} ${describeRef(r.ref)}${r.message ? `: ${r.message}` : ""}`,
  );
}

export function toJson(report: FleetApplyReport, dryRun: boolean, run?: RunRecord): unknown {
  return { dryRun, clusters: report.results.map(clusterJson), ...(tailJson(report, run) as object) };
}

/** One cluster of the JSON report. */
function clusterJson(r: SyncResult): unknown {
  return {
    cluster: r.cluster,
    ok: r.ok,
    counts: r.counts,
    ...(r.plan.blocked ? { blocked: r.plan.blocked } : {}),
    ...(r.plan.retained ? { retained: r.plan.retained.map((k) => ({ ...k.ref, reason: k.reason })) } : {}),
    durationMs: r.durationMs,
    results: r.results
      .filter((x) => x.outcome !== "unchanged")
      .map((x) => ({
        outcome: x.outcome,
        apiVersion: x.ref.apiVersion,
        kind: x.ref.kind,
        namespace: x.ref.namespace,
        name: x.ref.name,
        ...(x.message ? { message: x.message } : {}),
        ...(x.checked === false ? { checked: false } : {}),
      })),
  };
}

/** The JSON report's keys after `clusters`. */
function tailJson(report: FleetApplyReport, run?: RunRecord): unknown {
  return {
    suspended: report.suspended,
    suspendedAtRunTime: report.suspendedAtRunTime,
    errors: report.errors,
    ...(report.busy ? { busy: report.busy } : {}),
    ...(run
      ? {
          record: {
            revision: run.revision,
            ...(run.actor ? { by: recordedName(run.actor), byFrom: run.actor.from, verified: run.actor.verified } : {}),
            clusters: run.clusters,
          },
        }
      : {}),
  };
}

/**
 * The report written as the run goes: each chunk's clusters once they are applied and recorded (their objects then
 * let go), the rest at the end. The bytes are those toText, toJson or formatData give for the whole report: in YAML
 * (its keys sorted, as every -o yaml) `clusters` is the first key, so its items go out as they come, and the other keys
 * follow.
 */
export function reportWriter(format: "text" | "json" | "yaml", dryRun: boolean, colour: boolean) {
  const style = styler(colour);
  let written = 0;
  const head = `{\n  "dryRun": ${JSON.stringify(dryRun)},\n  "clusters": [`;
  return {
    clusters(results: readonly SyncResult[]): void {
      if (results.length === 0) return;
      if (format === "text") {
        process.stdout.write(`${results.flatMap((r) => clusterLines(r, dryRun, style)).join("\n")}\n`);
        return;
      }
      if (format === "yaml") {
        process.stdout.write(
          `${written === 0 ? "clusters:\n" : ""}${results.map((r) => sequenceItemYaml(clusterJson(r))).join("")}`,
        );
        written += results.length;
        return;
      }
      const parts = results.map((r) => JSON.stringify(clusterJson(r), null, 2).replace(/^/gm, "    "));
      process.stdout.write(jsonEscapeControls(`${written === 0 ? `${head}\n` : ",\n"}${parts.join(",\n")}`));
      written += results.length;
    },
    end(report: FleetApplyReport, run: RunRecord | undefined, waited?: WaitOutcome, timeout?: string): void {
      if (format === "text") {
        process.stdout.write(
          `${tailLines(report, dryRun, style, run, "vc apply").join("\n")}\n${waited ? waitText(waited, timeout ?? "") : ""}`,
        );
        return;
      }
      if (format === "yaml") {
        // Every other key sorts after `clusters`.
        process.stdout.write(
          `${written === 0 ? "clusters: []\n" : ""}${formatData({ dryRun, ...(tailJson(report, run) as object), ...(waited ? { wait: waitJson(waited) } : {}) }, "yaml")}`,
        );
        return;
      }
      // The tail object's keys, one level in: its text without the opening brace.
      const tail = JSON.stringify(
        { ...(tailJson(report, run) as object), ...(waited ? { wait: waitJson(waited) } : {}) },
        null,
        2,
      ).slice(2);
      process.stdout.write(jsonEscapeControls(`${written === 0 ? `${head}],\n` : "\n  ],\n"}${tail}\n`));
    },
  };
}
