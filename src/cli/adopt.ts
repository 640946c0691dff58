// `vc adopt`: hands one cluster over from another source to this one: applies this repository's version of it, taking
// over the objects the named owner holds.
import type { Command } from "commander";
import { prepareRecords } from "../pipeline/prepare.js";
import { ownerProblem } from "../model/owner.js";
import { useColour } from "../plan/format.js";
import { recordOnTarget } from "../pipeline/record-run.js";
import { readRunTimeSuspension } from "../pipeline/run-suspension.js";
import { applyFleet } from "../pipeline/fleet.js";
import { loadIndexedChunk, type DesiredIndex } from "../pipeline/load.js";
import { takeOwnershipName } from "../plan/gates.js";
import { refOf } from "../kube/object.js";
import { HISTORY_LIMIT_OPTION, IGNORE_SUSPENSION_OPTION, leaveSuspended, parseHistoryLimit } from "./apply.js";
import { toJson, toText } from "./apply-report.js";
import { applyExitCode } from "../ops/apply.js";
import { action, EXIT, formatData, parseOutputFormat, UserError } from "./common.js";
import {
  indexForCommand,
  openTargetForCommand,
  requireKnownClusters,
  withTargetOptions,
  type TargetFlags,
} from "./diff.js";

interface AdoptFlags extends TargetFlags {
  from?: string;
  takeOwnership?: string[];
  dryRun?: boolean;
  allowMassPrune?: boolean;
  ignoreSuspension?: boolean;
  output: string;
  historyLimit: string;
}

export function register(program: Command): void {
  const cmd = program
    .command("adopt")
    .summary("take a cluster or host objects over from another owner")
    .argument("<cluster>", "the cluster to take over (a folder clusters/<cluster> of this repository)")
    .description(
      "take a cluster, or objects on the host, over on purpose: with --from, apply this repository's version of a " +
        "cluster another source " +
        "holds, moving that source's record of it (inventory, status, history) to this source (--owner). Until " +
        "then every run of this source " +
        "leaves the cluster alone and reports the conflict; afterwards the old source does (remove the folder " +
        "there). With --prune, objects " +
        "of the old source that this repository does not render are deleted. With --take-ownership, objects that " +
        "exist on the host without " +
        "being in the cluster's record (vc diff shows them as conflicts) are written and recorded as the cluster's",
    );
  withTargetOptions(cmd)
    .option(
      "--from <owner>",
      "the source whose record holds the cluster now (vc diff names it); " +
        "--from '' takes over a record with no source name",
    )
    .option(
      "--take-ownership <object...>",
      "existing host objects to take into the cluster's record, as Kind/namespace/name (Kind/name cluster-scoped; " +
        "vc diff lists them)",
    )
    .option("--dry-run", "ask the server to check every write without persisting it (dryRun=All); dir: writes nothing")
    .option("--allow-mass-prune", "let --prune delete more than half of the cluster's objects")
    .option(...IGNORE_SUSPENSION_OPTION)
    .option(...HISTORY_LIMIT_OPTION)
    .option("-o, --output <format>", "output format: text, json, yaml", "text")
    .addHelpText(
      "after",
      "\nThe hand-over is recorded in the cluster's status as vc apply records a run (via adopt); the status " +
        "becomes this source's.",
    )
    .action(
      action(async (cluster: string, path: string | undefined, flags: AdoptFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "json", "yaml"] as const);
        if (flags.from === undefined && !flags.takeOwnership?.length)
          throw new UserError(
            "vc adopt needs --from <owner> (a cluster another source holds) or --take-ownership <object...> " +
              "(existing objects)",
            EXIT.failure,
          );
        // --from '' names a record written without a source name (an older vc create --apply): taken over too.
        const problem = flags.from === undefined || flags.from === "" ? undefined : ownerProblem(flags.from);
        if (problem) throw new UserError(`invalid --from "${flags.from}": ${problem}`);
        const takeOver = (flags.takeOwnership ?? []).map(parseObjectName);
        const historyLimit = parseHistoryLimit(flags.historyLimit);
        const { desired, index, selected, owner } = await indexForCommand(
          path,
          { ...flags, cluster: [cluster] },
          { markDirty: true },
        );
        if (owner === flags.from)
          throw new UserError(`--from ${flags.from} is this source's own owner name: nothing to hand over`);
        if (takeOver.length > 0) await requireRendered(index, cluster, takeOver);
        const target = await openTargetForCommand(flags);
        const started = new Date();
        try {
          await requireKnownClusters(target, desired, flags);
          for (const line of await prepareRecords(target, desired, owner, { dryRun: !!flags.dryRun, historyLimit }))
            process.stderr.write(`${line}\n`);
          if (takeOver.length > 0) target.takeOwnership?.(takeOver);
          if (flags.from !== undefined) await target.beginHandOver?.(cluster, flags.from, { dryRun: !!flags.dryRun });
          if (!index.valid.includes(cluster) && !index.contested.includes(cluster)) {
            const why =
              desired.errors.find((e) => e.cluster === cluster)?.message ??
              `no valid cluster folder clusters/${cluster}`;
            throw new UserError(`cannot adopt ${cluster}: ${why}`);
          }
          const suspension = await readRunTimeSuspension(target, desired, selected);
          const report = await applyFleet(
            target,
            index,
            {
              prune: !!flags.prune,
              allowMassPrune: !!flags.allowMassPrune,
              dryRun: !!flags.dryRun,
              selected,
              owner,
              adoptFrom: flags.from === undefined ? [] : [flags.from],
              suspendedAtRunTime: leaveSuspended(suspension, index, !!flags.ignoreSuspension),
            },
            { keepResults: true },
          );
          const run = flags.dryRun
            ? undefined
            : await recordOnTarget(target, report, desired, {
                revision: desired.revision,
                via: "adopt",
                owner,
                adoptFrom: flags.from === undefined ? [] : [flags.from],
                started,
                selected,
                historyLimit,
                statuses: suspension?.statuses,
                ignoreSuspension: !!flags.ignoreSuspension,
              });
          const data = () => ({
            owner,
            ...(flags.from !== undefined ? { from: flags.from } : {}),
            ...(takeOver.length ? { takeOwnership: takeOver } : {}),
            ...(toJson(report, !!flags.dryRun, run) as object),
          });
          process.stdout.write(
            format === "text"
              ? toText(report, !!flags.dryRun, useColour(process.stdout), run, "vc adopt")
              : formatData(data(), format),
          );
          const code = applyExitCode(report, run);
          if (code !== EXIT.ok) return code;
          if (flags.from !== undefined && !flags.dryRun) await target.endHandOver?.(cluster, flags.from);
          if (format === "text")
            process.stdout.write(
              `cluster ${cluster} is now owned by ${owner}${flags.dryRun ? " (dry run: not yet)" : ""}\n`,
            );
          return EXIT.ok;
        } finally {
          await target.close();
        }
      }),
    );
}

/** `Kind/namespace/name` or `Kind/name`, as --take-ownership takes it (plan/gates.ts takeOwnershipName). */
function parseObjectName(text: string): string {
  const parts = text.split("/");
  if ((parts.length !== 2 && parts.length !== 3) || parts.some((p) => p === ""))
    throw new UserError(
      `--take-ownership ${text}: name an object as Kind/namespace/name (Kind/name for a cluster-scoped one)`,
      EXIT.failure,
    );
  return text;
}

/**
 * Refuses --take-ownership of an object the cluster does not render (before anything is written): taking over what
 * the cluster would never apply records nothing and would only hide a typo.
 */
async function requireRendered(index: DesiredIndex, cluster: string, takeOver: readonly string[]): Promise<void> {
  if (!index.valid.includes(cluster) && !index.contested.includes(cluster)) return;
  const desired = await loadIndexedChunk(index, [cluster]);
  const objects = [...desired.clusters, ...(desired.contested ?? [])].find((c) => c.name === cluster)?.objects ?? [];
  const rendered = new Set(objects.map((o) => takeOwnershipName(refOf(o))));
  const unknown = takeOver.filter((name) => !rendered.has(name));
  if (unknown.length === 0) return;
  throw new UserError(
    `--take-ownership ${unknown.join(" ")}: cluster ${cluster} does not render ` +
      `${unknown.length === 1 ? "it" : "them"}, ` +
      `so there is nothing to take over (vc render ${cluster} lists its objects as Kind/namespace/name)`,
  );
}
