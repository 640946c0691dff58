// `vc apply`: server-side apply of what differs, cluster by cluster, with prune behind a guard; results and a summary.
import type { Command } from "commander";
import { prepareRecords } from "../pipeline/prepare.js";
import { recordsNamespace } from "../translate/keys.js";
import { shortRevision } from "../git/dirty.js";
import { sequenceItemYaml } from "../model/data-yaml.js";
import { escapeControls, jsonEscapeControls } from "../model/escape.js";
import { recordedName } from "../host/identity.js";
import { describeRef } from "../kube/object.js";
import { paint, suspendedAtRunTimeNote, useColour } from "../plan/format.js";
import { recordOnTarget, runRecorder, type RunRecord } from "../pipeline/record-run.js";
import { DEFAULT_HISTORY_LIMIT, HISTORY_BYTES } from "../records/archive.js";
import { readRunTimeSuspension, type RunTimeSuspension } from "../pipeline/run-suspension.js";
import { HISTORY_LIMIT } from "../records/status.js";
import type { DesiredIndex, DesiredState } from "../pipeline/load.js";
import { applyFleet, applyFleetStreamed, type ApplyFleetOptions, type FleetApplyReport } from "../pipeline/fleet.js";
import { OUTCOMES, type ObjectResult, type Outcome, type SyncResult, type Target } from "../sinks/types.js";
import { parseDuration } from "../model/duration.js";
import { healthRefs, waitForClusters, type HealthTarget } from "../health/fleet.js";
import { REAL_CLOCK, type WaitOutcome } from "../health/wait.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { action, EXIT, formatData, parseOutputFormat, UserError } from "./common.js";
import { indexForCommand, openTargetForCommand, requireKnownClusters, withTargetOptions, type TargetFlags } from "./diff.js";

/** What -o takes. */
const APPLY_FORMATS = ["text", "json", "yaml"] as const;
type ApplyFormat = (typeof APPLY_FORMATS)[number];

interface ApplyFlags extends TargetFlags {
  dryRun?: boolean;
  allowMassPrune?: boolean;
  force?: boolean;
  ignoreSuspension?: boolean;
  output: string;
  concurrency: string;
  historyLimit: string;
  wait?: boolean;
  timeout: string;
}

/** The `--history-limit` option of the commands that record runs (vc apply, vc adopt, vc reconcile). */
export const HISTORY_LIMIT_OPTION = [
  "--history-limit <n>",
  `reconciliations kept per cluster on the target (at least ${HISTORY_LIMIT}; the oldest dropped first, and always within ${HISTORY_BYTES / 1024} KiB)`,
  String(DEFAULT_HISTORY_LIMIT),
] as const;

/** The `--ignore-suspension` option of vc apply and vc adopt. */
export const IGNORE_SUSPENSION_OPTION = [
  "--ignore-suspension",
  "apply clusters suspended at run time (annotation vc.orch.io/suspended-by on their record, set by vc restore) all the same. " +
    "Dangerous while a restore runs: the apply can scale the control plane back up and write to it in the middle of the restore",
] as const;

/**
 * The clusters to leave alone because they are suspended at run time (none on a dir: target). With
 * --ignore-suspension none are, and stderr names each suspended cluster that is applied all the same.
 */
export function leaveSuspended(suspension: RunTimeSuspension | undefined, desired: DesiredState, ignore: boolean, index?: DesiredIndex): ReadonlyMap<string, string> | undefined {
  if (!ignore) return suspension?.suspended;
  // A streamed run knows its valid clusters from the index (its state holds no rendered cluster).
  const applied = (cluster: string): boolean => (index ? (index.valid.includes(cluster) || index.contested.includes(cluster)) && !index.suspended.has(cluster) : desired.clusters.some((c) => c.name === cluster && !c.suspend));
  for (const [cluster, by] of suspension?.suspended ?? []) {
    if (applied(cluster)) process.stderr.write(`warning: cluster ${cluster} is suspended by ${escapeControls(by)} (run-time); applying it anyway (--ignore-suspension)\n`);
  }
  return undefined;
}

/** A valid --history-limit. */
export function parseHistoryLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < HISTORY_LIMIT) throw new UserError(`invalid --history-limit "${value}": use an integer of at least ${HISTORY_LIMIT}`);
  return n;
}

/** Progress lines on stderr at most once a second, only for runs with this many changes or more. */
const PROGRESS_MIN_CHANGES = 100;

export function register(program: Command): void {
  withTargetOptions(
    program
      .command("apply")
      .description(
        "apply the repository's clusters to a target: server-side apply (field manager vc) of objects that differ, " +
          "namespaces first and mesh last, retrying 409/429/5xx/connection resets; with --prune, deletes what vc applied " +
          "and the repository no longer has, in reverse order",
      ),
  )
    .option("--dry-run", "ask the server to check every write without persisting it (dryRun=All); dir: writes nothing")
    .option("--allow-mass-prune", "let --prune delete more than half (or all) of a cluster's objects, e.g. for a cluster removed from the repository")
    .option(
      "--force",
      "recreate objects whose change the API server refuses in place (immutable fields, e.g. a StatefulSet's volumeClaimTemplates): " +
        "a StatefulSet or Deployment is deleted with propagationPolicy=Orphan, keeping its pods and volume claims, and created anew; " +
        "claims that grow are expanded where the storage class allows it. Without it such a cluster is not applied at all",
    )
    .option(...IGNORE_SUSPENSION_OPTION)
    .option("--concurrency <n>", "clusters applied at once", "4")
    .option(...HISTORY_LIMIT_OPTION)
    .option("--wait", "after applying, wait until every applied cluster is Healthy on the host (exit 0), or one is Degraded or --timeout passes (exit 1, naming the cluster and why); kube target only")
    .option("--timeout <duration>", "how long --wait waits (e.g. 90s, 5m)", "5m")
    .option("-o, --output <format>", "output format: text, json, yaml", "text")
    .addHelpText(
      "after",
      "\nEvery run but a dry run is recorded in each cluster's status on the target, as the reconciler records its passes:\n" +
        "the revision (HEAD, with -dirty when clusters/, policy.yaml or fleet/ differ from it; the fetched commit with --repo), the\n" +
        "result, and who ran it (the host's SelfSubjectReview, else the kubeconfig's user; on dir: the local account).\n" +
        "vc status, vc list and vc history show it. Exit status 2 when a record cannot be written.\n\n" +
        "A cluster suspended at run time (vc restore annotates its record) is left alone and nothing of it is\n" +
        "recorded: exit status 1, as the repository's version of it was not applied. A cluster suspended in cluster.yaml\n" +
        "(suspend: true) is left alone too, with exit status 0: that is what the repository asks for.",
    )
    .action(
      action(async (path: string | undefined, flags: ApplyFlags) => {
        const format = parseOutputFormat(flags.output, APPLY_FORMATS);
        const clusterConcurrency = Number(flags.concurrency);
        if (!Number.isInteger(clusterConcurrency) || clusterConcurrency < 1) throw new UserError(`--concurrency must be a positive integer, not "${flags.concurrency}"`);
        const historyLimit = parseHistoryLimit(flags.historyLimit);
        const timeoutMs = parseDuration(flags.timeout);
        if (flags.wait && flags.dryRun) throw new UserError("--wait waits for what an apply changed: it cannot be used with --dry-run");
        // The whole fleet is applied a chunk at a time (memory follows the chunk; with --wait, each cluster's references
        // of what its health is read by are kept); a selection is loaded at once.
        const { desired, index, selected, owner } = await indexForCommand(path, flags, { markDirty: true, stream: true });
        const target = await openTargetForCommand(flags);
        if (flags.wait && !(target instanceof KubeTarget)) {
          await target.close();
          throw new UserError(`--wait needs a live host (--target kube): ${target.description} has no health to wait for`);
        }
        const progress = progressPrinter();
        const started = new Date();
        try {
          await requireKnownClusters(target, desired, flags);
          for (const line of await prepareRecords(target, desired, owner, { dryRun: !!flags.dryRun, historyLimit })) process.stderr.write(`${line}\n`);
          const suspension = await readRunTimeSuspension(target, desired, selected);
          const fleetOpts: ApplyFleetOptions = {
            prune: !!flags.prune,
            allowMassPrune: !!flags.allowMassPrune,
            force: !!flags.force,
            dryRun: !!flags.dryRun,
            selected,
            owner,
            clusterConcurrency,
            onProgress: progress.update,
            suspendedAtRunTime: leaveSuspended(suspension, desired, !!flags.ignoreSuspension, index),
          };
          if (index) {
            const recordOpts = { revision: desired.revision, via: "apply" as const, owner, started, selected, historyLimit, statuses: suspension?.statuses, ignoreSuspension: !!flags.ignoreSuspension };
            return await applyStreamed(target, index, fleetOpts, recordOpts, format, !!flags.dryRun, flags.wait ? { timeoutMs, timeout: flags.timeout } : undefined);
          }
          const report = await applyFleet(target, desired, fleetOpts);
          progress.end();
          // A dry run changed nothing, so there is nothing to put on the record.
          const run = flags.dryRun ? undefined : await recordOnTarget(target, report, desired, { revision: desired.revision, via: "apply", owner, started, selected, historyLimit, statuses: suspension?.statuses, ignoreSuspension: !!flags.ignoreSuspension });
          const code = exitCode(report, run);
          // Only a clean apply is waited for: a failed or blocked one already says what went wrong.
          const applied = report.results.filter((r) => r.ok).map((r) => r.cluster);
          const waited = flags.wait && code === EXIT.ok && target instanceof KubeTarget ? await waitForClusters(target.client, desired.clusters, applied, REAL_CLOCK, { timeoutMs }) : undefined;
          const data = () => ({ ...(toJson(report, !!flags.dryRun, run) as object), ...(waited ? { wait: waitJson(waited) } : {}) });
          process.stdout.write(format === "text" ? toText(report, !!flags.dryRun, useColour(process.stdout), run) + (waited ? waitText(waited, flags.timeout) : "") : formatData(data(), format));
          return waitedCode(waited, flags.timeout) ?? code;
        } finally {
          await target.close();
        }
      }),
    );
}

/** Exit status 1 and the error line when a wait did not end healthy; undefined otherwise. */
function waitedCode(waited: WaitOutcome | undefined, timeout: string): number | undefined {
  if (!waited || waited.result === "healthy") return undefined;
  process.stderr.write(waited.result === "degraded" ? `error: cluster ${waited.cluster} is Degraded: ${escapeControls(waited.reason ?? "")}\n` : `error: timed out after ${timeout} waiting for cluster ${waited.cluster} (${escapeControls(waited.reason ?? "")})\n`);
  return EXIT.invalid;
}

/** The health each waited-for cluster ended with, and how the wait ended. */
function waitJson(w: WaitOutcome): unknown {
  const health = Object.fromEntries([...w.health].map(([c, h]) => [c, { status: h.status, ...(h.reason ? { reason: h.reason } : {}) }]));
  return w.result === "healthy" ? { result: w.result, health } : { result: w.result, cluster: w.cluster, reason: w.reason, health };
}

function waitText(w: WaitOutcome, timeout: string): string {
  const lines = [...w.health].map(([c, h]) => `cluster ${c}: ${h.status}${h.reason ? ` (${h.reason})` : ""}`);
  if (w.result === "healthy") lines.push(`every applied cluster is Healthy`);
  else if (w.result === "timeout") lines.push(`not every applied cluster became Healthy within ${timeout}`);
  return `${lines.join("\n")}\n`;
}

function progressPrinter(suffix: () => string = () => "") {
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
      const line = `progress: ${done}/${total} objects (${Math.floor((done * 100) / total)}%), cluster ${cluster}${suffix()}`;
      process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    },
    end() {
      if (shown && tty) process.stderr.write("\n");
    },
  };
}

/**
 * 2 when an object or a record failed; 1 when a cluster is invalid or blocked, or suspended at run time (the
 * repository asks for it, but it was not applied); else 0 (a cluster suspended in cluster.yaml included).
 */
export function exitCode(report: FleetApplyReport, run: RunRecord | undefined): number {
  if (report.results.some((r) => r.counts.failed > 0) || run?.clusters.some((c) => c.outcome === "failed")) return EXIT.failure;
  if (report.errors.length > 0 || report.results.some((r) => r.plan.blocked) || report.suspendedAtRunTime.length > 0) return EXIT.invalid;
  return EXIT.ok;
}

const PAST: Record<Outcome, string> = { created: "created", updated: "updated", deleted: "deleted", unchanged: "unchanged", failed: "failed", skipped: "skipped" };

/** A dry run's words: what would happen, never a line that reads as done. */
const WOULD: Record<Outcome, string> = { created: "would create", updated: "would update", deleted: "would delete", unchanged: "unchanged", failed: "would fail", skipped: "would skip" };
const WOULD_COUNT: Record<Outcome, string> = { created: "to create", updated: "to update", deleted: "to delete", unchanged: "unchanged", failed: "refused", skipped: "to skip" };

export function outcomeLine(counts: Record<Outcome, number>, dryRun = false): string {
  return OUTCOMES.map((o) => `${counts[o]} ${(dryRun ? WOULD_COUNT : PAST)[o]}`).join(", ");
}

/** The text report. Every line may carry host text (names, server messages): escaped (model/escape.ts) before any colour is added. */
export function toText(report: FleetApplyReport, dryRun: boolean, colour: boolean, run?: RunRecord, command = "vc apply"): string {
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
  for (const res of r.results) if (res.outcome !== "unchanged" && !(r.plan.blocked && res.outcome === "skipped")) out.push(resultLine(res, style, dryRun));
  out.push(style("bold", `cluster ${r.cluster}: ${outcomeLine(r.counts, dryRun)}${dryRun ? ` (dry run${uncheckedNote(r.results)})` : ""}`));
  for (const k of r.plan.retained ?? []) out.push(style("yellow", `kept ${describeRef(k.ref)}: ${k.reason}`));
  if (r.plan.blocked) out.push(style("red", `! ${r.plan.blocked}`));
  return out;
}

/** The text report's lines after the clusters': suspended clusters, errors, the record and the totals. */
function tailLines(report: FleetApplyReport, dryRun: boolean, style: Style, run: RunRecord | undefined, command: string): string[] {
  const out: string[] = [];
  const total = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of report.results) for (const o of OUTCOMES) total[o] += r.counts[o];
  for (const name of report.suspended) out.push(style(undefined, `cluster ${name}: suspended in cluster.yaml, left alone`));
  for (const s of report.suspendedAtRunTime) out.push(style("yellow", `cluster ${s.cluster}: ${suspendedAtRunTimeNote(s)}, left alone; ${command} --ignore-suspension to apply anyway`));
  for (const e of report.errors) out.push(style("red", `! cluster ${e.cluster}: ${e.message}`));
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
    if (c.outcome === "failed") out.push(style("red", `! cluster ${c.cluster}: applied, but its record could not be written: ${c.message} (vc needs get, create and patch on ConfigMaps in the records namespace ${recordsNamespace()})`));
    else if (c.outcome === "not-owned" && !blockedByOwner.has(c.cluster)) out.push(style("yellow", `cluster ${c.cluster}: not recorded: ${c.message}`));
  }
  const recorded = run.clusters.filter((c) => c.outcome === "recorded" || c.outcome === "forgotten").length;
  if (recorded > 0 && run.actor) out.push(style(undefined, `recorded ${recorded} cluster(s) at revision ${shortRevision(run.revision)} by ${recordedName(run.actor)} (${run.actor.from})`));
  return out;
}

function resultLine(r: ObjectResult, style: Style, dryRun = false): string {
  if (r.checked === false) return style("yellow", `${describeRef(r.ref)} ${r.message}`);
  const colour = r.outcome === "failed" ? "red" : r.outcome === "deleted" ? "red" : r.outcome === "skipped" ? "yellow" : "green";
  return style(colour, `${(dryRun ? WOULD : PAST)[r.outcome]} ${describeRef(r.ref)}${r.message ? `: ${r.message}` : ""}`);
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
    results: r.results.filter((x) => x.outcome !== "unchanged").map((x) => ({ outcome: x.outcome, apiVersion: x.ref.apiVersion, kind: x.ref.kind, namespace: x.ref.namespace, name: x.ref.name, ...(x.message ? { message: x.message } : {}), ...(x.checked === false ? { checked: false } : {}) })),
  };
}

/** The JSON report's keys after `clusters`. */
function tailJson(report: FleetApplyReport, run?: RunRecord): unknown {
  return {
    suspended: report.suspended,
    suspendedAtRunTime: report.suspendedAtRunTime,
    errors: report.errors,
    ...(run ? { record: { revision: run.revision, ...(run.actor ? { by: recordedName(run.actor), byFrom: run.actor.from, verified: run.actor.verified } : {}), clusters: run.clusters } } : {}),
  };
}

/**
 * The report written as the run goes: each chunk's clusters once they are applied and recorded (their objects then
 * let go), the rest at the end. The bytes are those toText, toJson or formatData give for the whole report: in YAML
 * (its keys sorted, as every -o yaml) `clusters` is the first key, so its items go out as they come, and the other keys
 * follow.
 */
function reportWriter(format: ApplyFormat, dryRun: boolean, colour: boolean) {
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
        process.stdout.write(`${written === 0 ? "clusters:\n" : ""}${results.map((r) => sequenceItemYaml(clusterJson(r))).join("")}`);
        written += results.length;
        return;
      }
      const parts = results.map((r) => JSON.stringify(clusterJson(r), null, 2).replace(/^/gm, "    "));
      process.stdout.write(jsonEscapeControls(`${written === 0 ? `${head}\n` : ",\n"}${parts.join(",\n")}`));
      written += results.length;
    },
    end(report: FleetApplyReport, run: RunRecord | undefined, waited?: WaitOutcome, timeout?: string): void {
      if (format === "text") {
        process.stdout.write(`${tailLines(report, dryRun, style, run, "vc apply").join("\n")}\n${waited ? waitText(waited, timeout ?? "") : ""}`);
        return;
      }
      if (format === "yaml") {
        // Every other key sorts after `clusters`.
        process.stdout.write(`${written === 0 ? "clusters: []\n" : ""}${formatData({ dryRun, ...(tailJson(report, run) as object), ...(waited ? { wait: waitJson(waited) } : {}) }, "yaml")}`);
        return;
      }
      // The tail object's keys, one level in: its text without the opening brace.
      const tail = JSON.stringify({ ...(tailJson(report, run) as object), ...(waited ? { wait: waitJson(waited) } : {}) }, null, 2).slice(2);
      process.stdout.write(jsonEscapeControls(`${written === 0 ? `${head}],\n` : "\n  ],\n"}${tail}\n`));
    },
  };
}

/**
 * `vc apply` of the whole fleet, streamed (applyFleetStreamed): each chunk is recorded and printed as it ends, then
 * the clusters left alone, the errors and the record; progress on stderr for fleets of more than one chunk.
 */
async function applyStreamed(
  target: Target,
  index: DesiredIndex,
  opts: ApplyFleetOptions,
  recordOpts: Omit<Parameters<typeof runRecorder>[1], "store" | "actor">,
  format: ApplyFormat,
  dryRun: boolean,
  wait?: { timeoutMs: number; timeout: string },
): Promise<number> {
  const desired = index.state;
  // With --wait, each applied cluster as its health is read: its host namespace and the references of its objects.
  const healthTargets: HealthTarget[] = [];
  const writer = reportWriter(format, dryRun, format === "text" && useColour(process.stdout));
  const recorder = dryRun ? undefined : runRecorder(target, recordOpts);
  // A folder target has no statuses read ahead: each chunk's are read one by one, never the whole fleet's at once.
  const oneByOne = !(target instanceof KubeTarget);
  // Objects as they are applied (of those planned so far), and past the first chunk the clusters done of the fleet's.
  let clusters = "";
  const progress = progressPrinter(() => clusters);
  const report = await applyFleetStreamed(target, index, {
    ...opts,
    onProgress: progress.update,
    onChunk: async (results) => {
      await recorder?.record({ results, errors: [], suspended: [], suspendedAtRunTime: [] }, desired, { oneByOne });
      writer.clusters(results);
      if (wait) for (const r of results) if (r.ok) healthTargets.push(healthTargetOf(r));
    },
    onChunkDone: (done, total) => {
      if (done < total) clusters = `, ${done}/${total} clusters done`;
    },
  });
  progress.end();
  // The clusters recorded with no sync: suspended in cluster.yaml, and invalid (the repository's errors, as recordOnTarget reads them).
  const synced = new Set(report.results.map((r) => r.cluster));
  await recorder?.record({ results: [], errors: [], suspended: report.suspended, suspendedAtRunTime: [] }, { ...desired, errors: report.invalid.filter((e) => !synced.has(e.cluster)) }, { oneByOne });
  const run = recorder?.run();
  const code = exitCode(report, run);
  // Only a clean apply is waited for: a failed or blocked one already says what went wrong.
  const waited = wait && code === EXIT.ok && target instanceof KubeTarget ? await waitForClusters(target.client, healthTargets, healthTargets.map((c) => c.name), REAL_CLOCK, { timeoutMs: wait.timeoutMs }) : undefined;
  writer.end(report, run, waited, wait?.timeout);
  return (wait && waitedCode(waited, wait.timeout)) ?? code;
}

/** A synced cluster as its health is read: the references of the objects it holds after the run (what was not deleted). */
function healthTargetOf(r: SyncResult): HealthTarget {
  return { name: r.cluster, hostNamespace: r.plan.hostNamespace ?? "", objects: healthRefs(r.plan.changes.filter((c) => c.action !== "delete").map((c) => c.ref)) };
}

