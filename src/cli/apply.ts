// `vc apply`: server-side apply of what differs, cluster by cluster, with prune behind a guard; results and a summary.
import type { Command } from "commander";
import { parseDuration } from "../model/duration.js";
import { escapeControls } from "../model/escape.js";
import type { DesiredIndex } from "../pipeline/load.js";
import type { ApplyFleetOptions } from "../pipeline/fleet.js";
import { prepareRecords } from "../pipeline/prepare.js";
import { readRunTimeSuspension, type RunTimeSuspension } from "../pipeline/run-suspension.js";
import { useColour } from "../plan/format.js";
import { DEFAULT_HISTORY_LIMIT, HISTORY_BYTES } from "../records/archive.js";
import { HISTORY_LIMIT } from "../records/status.js";
import { applyExitCode, applyRepository } from "../ops/apply.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { progressPrinter, reportWriter, waitedCode } from "./apply-report.js";
import { action, parseOutputFormat, UserError } from "./common.js";
import {
  indexForCommand,
  openTargetForCommand,
  requireKnownClusters,
  withTargetOptions,
  type TargetFlags,
} from "./diff.js";

/** What -o takes. */
const APPLY_FORMATS = ["text", "json", "yaml"] as const;

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
  lockTimeout: string;
}

/** The `--lock-timeout` option of the commands that apply (vc apply, vc adopt, vc create --apply). */
export const LOCK_TIMEOUT_OPTION = [
  "--lock-timeout <duration>",
  "how long to wait for another run writing a cluster (its apply lease on the cluster's record) to end or lapse; " +
    "past it " +
    "that cluster is left alone and the run exits 2 (0: at once). A lease whose run died lapses 15 s after its last " +
    "renewal, at once when its process ran on this machine",
  "2m",
] as const;

/** Tells on stderr, once per cluster, that it waits for another run writing the cluster. */
export function tellWait(cluster: string, holder: string): void {
  process.stderr.write(`cluster ${cluster}: waiting for another run writing it (${escapeControls(holder)})\n`);
}

/** The `--history-limit` option of the commands that record runs (vc apply, vc adopt, vc reconcile). */
export const HISTORY_LIMIT_OPTION = [
  "--history-limit <n>",
  `reconciliations kept per cluster on the target (at least ${HISTORY_LIMIT}; the oldest dropped first, and always ` +
    `within ${HISTORY_BYTES / 1024} KiB)`,
  String(DEFAULT_HISTORY_LIMIT),
] as const;

/** The `--ignore-suspension` option of vc apply and vc adopt. */
export const IGNORE_SUSPENSION_OPTION = [
  "--ignore-suspension",
  "apply clusters suspended at run time (annotation vc.orch.io/suspended-by on their record, set by vc restore) " +
    "all the same. " +
    "Dangerous while a restore runs: the apply can scale the control plane back up and write to it in the middle " +
    "of the restore",
] as const;

/**
 * The clusters to leave alone because they are suspended at run time (none on a dir: target). With
 * --ignore-suspension none are, and stderr names each suspended cluster that is applied all the same.
 */
export function leaveSuspended(
  suspension: RunTimeSuspension | undefined,
  index: DesiredIndex,
  ignore: boolean,
): ReadonlyMap<string, string> | undefined {
  if (!ignore) return suspension?.suspended;
  const applied = (cluster: string): boolean =>
    (index.valid.includes(cluster) || index.contested.includes(cluster)) && !index.suspended.has(cluster);
  for (const [cluster, by] of suspension?.suspended ?? []) {
    if (applied(cluster))
      process.stderr.write(
        `warning: cluster ${cluster} is suspended by ${escapeControls(by)} (run-time); applying it anyway ` +
          `(--ignore-suspension)\n`,
      );
  }
  return undefined;
}

/** A valid --history-limit. */
export function parseHistoryLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < HISTORY_LIMIT)
    throw new UserError(`invalid --history-limit "${value}": use an integer of at least ${HISTORY_LIMIT}`);
  return n;
}

export function register(program: Command): void {
  withTargetOptions(
    program
      .command("apply")
      .summary("apply the repository's clusters to a target")
      .description(
        "apply the repository's clusters to a target: server-side apply (field manager vc) of objects that differ, " +
          "namespaces first and mesh last, retrying 409/429/5xx/connection resets; with --prune, deletes what vc " +
          "applied " +
          "and the repository no longer has, in reverse order",
      ),
  )
    .option("--dry-run", "ask the server to check every write without persisting it (dryRun=All); dir: writes nothing")
    .option(
      "--allow-mass-prune",
      "let --prune delete more than half (or all) of a cluster's objects, e.g. for a cluster removed from the " +
        "repository",
    )
    .option(
      "--force",
      "recreate objects whose change the API server refuses in place (immutable fields, e.g. a StatefulSet's " +
        "volumeClaimTemplates): " +
        "a StatefulSet or Deployment is deleted with propagationPolicy=Orphan, keeping its pods and volume claims, " +
        "and created anew; " +
        "claims that grow are expanded where the storage class allows it. Without it such a cluster is not " +
        "applied at all",
    )
    .option(...IGNORE_SUSPENSION_OPTION)
    .option("--concurrency <n>", "clusters applied at once", "4")
    .option(...HISTORY_LIMIT_OPTION)
    .option(
      "--wait",
      "after applying, wait until every applied cluster is Healthy on the host (exit 0), or one is Degraded or " +
        "--timeout passes (exit 1, naming the cluster and why); kube target only",
    )
    .option("--timeout <duration>", "how long --wait waits (e.g. 90s, 5m)", "5m")
    .option(...LOCK_TIMEOUT_OPTION)
    .option("-o, --output <format>", "output format: text, json, yaml", "text")
    .addHelpText(
      "after",
      "\nEvery run but a dry run is recorded in each cluster's status on the target, as the reconciler records its " +
        "passes:\n" +
        "the revision (HEAD, with -dirty when clusters/, policy.yaml or fleet/ differ from it; the fetched commit " +
        "with --repo), the\n" +
        "result, and who ran it (the host's SelfSubjectReview, else the kubeconfig's user; on dir: the local " +
        "account).\n" +
        "vc status, vc list and vc history show it. Exit status 2 when a record cannot be written.\n\n" +
        "A cluster suspended at run time (vc restore annotates its record) is left alone and nothing of it is\n" +
        "recorded: exit status 1, as the repository's version of it was not applied. A cluster suspended in " +
        "cluster.yaml\n" +
        "(suspend: true) is left alone too, with exit status 0: that is what the repository asks for.",
    )
    .action(
      action(async (path: string | undefined, flags: ApplyFlags) => {
        const format = parseOutputFormat(flags.output, APPLY_FORMATS);
        const clusterConcurrency = Number(flags.concurrency);
        if (!Number.isInteger(clusterConcurrency) || clusterConcurrency < 1)
          throw new UserError(`--concurrency must be a positive integer, not "${flags.concurrency}"`);
        const historyLimit = parseHistoryLimit(flags.historyLimit);
        const timeoutMs = parseDuration(flags.timeout);
        const lockWaitMs = parseDuration(flags.lockTimeout);
        if (flags.wait && flags.dryRun)
          throw new UserError("--wait waits for what an apply changed: it cannot be used with --dry-run");
        // The run is applied a chunk at a time: memory follows the chunk (with --wait, each cluster's references of
        // what its health is read by are kept).
        const { desired, index, selected, owner } = await indexForCommand(path, flags, { markDirty: true });
        const target = await openTargetForCommand(flags);
        if (flags.wait && !(target instanceof KubeTarget)) {
          await target.close();
          throw new UserError(
            `--wait needs a live host (--target kube): ${target.description} has no health to wait for`,
          );
        }
        const started = new Date();
        try {
          await requireKnownClusters(target, desired, flags);
          for (const line of await prepareRecords(target, desired, owner, { dryRun: !!flags.dryRun, historyLimit }))
            process.stderr.write(`${line}\n`);
          const suspension = await readRunTimeSuspension(target, desired, selected);
          const fleetOpts: ApplyFleetOptions = {
            prune: !!flags.prune,
            allowMassPrune: !!flags.allowMassPrune,
            force: !!flags.force,
            dryRun: !!flags.dryRun,
            selected,
            owner,
            clusterConcurrency,
            suspendedAtRunTime: leaveSuspended(suspension, index, !!flags.ignoreSuspension),
            lockWaitMs,
            onWait: tellWait,
          };
          const record = {
            revision: desired.revision,
            via: "apply" as const,
            owner,
            started,
            selected,
            historyLimit,
            statuses: suspension?.statuses,
            ignoreSuspension: !!flags.ignoreSuspension,
          };
          const dryRun = !!flags.dryRun;
          const writer = reportWriter(format, dryRun, format === "text" && useColour(process.stdout));
          // Objects as they are applied (of those planned so far), and past the first chunk the clusters done of the
          // fleet's.
          let clusters = "";
          const progress = progressPrinter(() => clusters);
          const { report, run, waited } = await applyRepository(target, index, {
            fleet: { ...fleetOpts, onProgress: progress.update },
            ...(dryRun ? {} : { record }),
            ...(flags.wait ? { waitMs: timeoutMs } : {}),
            onResults: (results) => writer.clusters(results),
            onChunkDone: (done, total) => void (done < total && (clusters = `, ${done}/${total} clusters done`)),
          });
          progress.end();
          writer.end(report, run, waited, flags.timeout);
          return (waited && waitedCode(waited, flags.timeout)) ?? applyExitCode(report, run);
        } finally {
          await target.close();
        }
      }),
    );
}
