// `vc adopt`: hands one cluster over from another source to this one: applies this repository's version of it, taking over the objects the named owner holds.
import { jsonEscapeControls } from "../model/escape.js";
import type { Command } from "commander";
import { ownerProblem } from "../model/owner.js";
import { useColour } from "../plan/format.js";
import { recordOnTarget } from "../reconciler/apply-record.js";
import { readRunTimeSuspension } from "../reconciler/run-suspension.js";
import { applyFleet } from "../target/fleet.js";
import { exitCode, HISTORY_LIMIT_OPTION, IGNORE_SUSPENSION_OPTION, leaveSuspended, parseHistoryLimit, toJson, toText } from "./apply.js";
import { action, EXIT, parseOutputFormat, UserError } from "./common.js";
import { loadForCommand, openTargetForCommand, requireKnownClusters, withTargetOptions, type TargetFlags } from "./diff.js";

interface AdoptFlags extends TargetFlags {
  from: string;
  dryRun?: boolean;
  allowMassPrune?: boolean;
  ignoreSuspension?: boolean;
  output: string;
  historyLimit: string;
}

export function register(program: Command): void {
  const cmd = program
    .command("adopt")
    .argument("<cluster>", "the cluster to take over (a folder clusters/<cluster> of this repository)")
    .description(
      "take a cluster over from another source: apply this repository's version of it, relabelling the objects owned by --from " +
        "(and those with no owner) as this source's (--owner). Until then every run of this source leaves the cluster alone and " +
        "reports the conflict; afterwards the old source does (remove the folder there). With --prune, objects of the old source " +
        "that this repository does not render are deleted",
    );
  withTargetOptions(cmd)
    .requiredOption("--from <owner>", "the owner name the cluster's objects carry now (vc.orch.io/owner; vc diff names it)")
    .option("--dry-run", "ask the server to check every write without persisting it (dryRun=All); dir: writes nothing")
    .option("--allow-mass-prune", "let --prune delete more than half of the cluster's objects")
    .option(...IGNORE_SUSPENSION_OPTION)
    .option(...HISTORY_LIMIT_OPTION)
    .option("-o, --output <format>", "output format: text, json", "text")
    .addHelpText("after", "\nThe hand-over is recorded in the cluster's status as vc apply records a run (via adopt); the status becomes this source's.")
    .action(
      action(async (cluster: string, path: string | undefined, flags: AdoptFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "json"] as const);
        const problem = ownerProblem(flags.from);
        if (problem) throw new UserError(`invalid --from "${flags.from}": ${problem}`);
        const historyLimit = parseHistoryLimit(flags.historyLimit);
        const { desired, selected, owner } = await loadForCommand(path, { ...flags, cluster: [cluster] }, { markDirty: true });
        if (owner === flags.from) throw new UserError(`--from ${flags.from} is this source's own owner name: nothing to hand over`);
        const target = await openTargetForCommand(flags);
        const started = new Date();
        try {
          await requireKnownClusters(target, desired, flags);
          if (!desired.clusters.some((c) => c.name === cluster)) {
            const why = desired.errors.find((e) => e.cluster === cluster)?.message ?? `no valid cluster folder clusters/${cluster}`;
            throw new UserError(`cannot adopt ${cluster}: ${why}`);
          }
          const suspension = await readRunTimeSuspension(target, desired, selected);
          const report = await applyFleet(target, desired, {
            prune: !!flags.prune,
            allowMassPrune: !!flags.allowMassPrune,
            dryRun: !!flags.dryRun,
            selected,
            owner,
            adoptFrom: [flags.from],
            suspendedAtRunTime: leaveSuspended(suspension, desired, !!flags.ignoreSuspension),
          });
          const run = flags.dryRun
            ? undefined
            : await recordOnTarget(target, report, desired, { revision: desired.revision, via: "adopt", owner, adoptFrom: [flags.from], started, selected, historyLimit, statuses: suspension?.statuses, ignoreSuspension: !!flags.ignoreSuspension });
          process.stdout.write(format === "json" ? `${jsonEscapeControls(JSON.stringify({ owner, from: flags.from, ...(toJson(report, !!flags.dryRun, run) as object) }, null, 2))}\n` : toText(report, !!flags.dryRun, useColour(process.stdout), run, "vc adopt"));
          const code = exitCode(report, run);
          if (code !== EXIT.ok) return code;
          if (format === "text") process.stdout.write(`cluster ${cluster} is now owned by ${owner}${flags.dryRun ? " (dry run: not yet)" : ""}\n`);
          return EXIT.ok;
        } finally {
          await target.close();
        }
      }),
    );
}
