// `vc diff`: the plan of the repository's clusters against a target, as a unified diff per object; --exit-code for
// drift checks.
import { escapeControls } from "../model/escape.js";
import type { Command } from "commander";
import { prepareRecords } from "../pipeline/prepare.js";
import { PLAN_FORMATS, useColour, writePlanReport } from "../plan/format.js";
import { DiffSpill } from "../plan/spill.js";
import { hasChanges } from "../plan/build.js";
import { loadDesiredIndex, type DesiredIndex, type DesiredState } from "../pipeline/load.js";
import { planFleet } from "../pipeline/fleet.js";
import { clustersNowhere } from "../pipeline/chunks.js";
import { openTarget, TargetSpecError } from "../sinks/index.js";
import { resolveSource, SourceError } from "../pipeline/source.js";
import { emptyClustersNote } from "../repo/fleet-folder.js";
import { DEFAULT_TARGET, type Target } from "../sinks/types.js";
import { fleetLocation } from "../git/origin.js";
import { commandPins, heldLines, type CommandPins } from "../rollout/command.js";
import { chooseOwner, OWNER_ENV, OwnerError } from "../model/owner.js";
import { clusterFolderNames } from "../repo/layout.js";
import { readRunTimeSuspension } from "../pipeline/run-suspension.js";
import { maskUrlCredentials } from "../model/secrets.js";
import { action, EXIT, parseOutputFormat, UnknownClusterError, UserError } from "./common.js";

/** Options `vc diff` and `vc apply` share. */
export interface TargetFlags {
  repo?: string;
  branch?: string;
  gitCredentials?: string;
  cluster?: string[];
  target: string;
  kubeconfig?: string;
  context?: string;
  prune?: boolean;
  owner?: string;
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Adds the source, cluster and target options to a command. */
export function withTargetOptions(cmd: Command): Command {
  return cmd
    .argument(
      "[path]",
      "repository folder (holding clusters/), or a folder inside clusters/<name>; default: the current folder",
    )
    .option(
      "--repo <url>",
      "a remote git repository (HTTP(S)) instead of a folder; cloned once into ~/.cache/vc/repos, then fetched",
    )
    .option("--branch <name>", "branch or tag of --repo", "main")
    .option(
      "--git-credentials <file>",
      "file with a token or user:password for --repo (else VC_GIT_TOKEN, or VC_GIT_USERNAME and VC_GIT_PASSWORD)",
    )
    .option("--cluster <name>", "only this cluster (repeatable); default: every cluster", collect)
    .option("--target <target>", "kube (the host of your kubeconfig) or dir:PATH (hydrated manifests)", DEFAULT_TARGET)
    .option(
      "--kubeconfig <file>",
      "kubeconfig for --target kube (default $KUBECONFIG, ~/.kube/config, or the in-cluster service account)",
    )
    .option("--context <name>", "kubeconfig context for --target kube")
    .option(
      "--prune",
      "include deletes of objects vc applied that the repository no longer has (clusters with prune: false are " +
        "never pruned)",
    )
    .option(
      "--owner <name>",
      `the owner name this source records on every object (default $${OWNER_ENV}, else derived from the ` +
        `repository's URL and the folder of clusters/); clusters another owner holds are left alone`,
    );
}

/**
 * Reads the repository (folder or remote) and validates the selected clusters (all when none is named) in summary: the
 * run's index, its clusters loaded and rendered a chunk at a time by the pipeline. `desired` is the index's state.
 */
export async function indexForCommand(
  path: string | undefined,
  flags: TargetFlags,
  opts: { markDirty?: boolean } = {},
): Promise<{
  desired: DesiredState;
  index: DesiredIndex;
  selected: string[];
  owner: string;
  held?: Record<string, string>;
}> {
  try {
    const source = await resolveSource({
      path,
      repo: flags.repo,
      branch: flags.branch,
      credentialsFile: flags.gitCredentials,
      markDirty: opts.markDirty,
    });
    const selected = [...(flags.cluster ?? []), ...(source.cluster ? [source.cluster] : [])];
    const empty = selected.length === 0 ? emptyClustersNote(source.root) : undefined;
    if (empty) process.stderr.write(`${empty}\n`);
    const owner = chooseOwner(
      flags.owner,
      flags.repo ? { repo: flags.repo, subdir: "" } : await fleetLocation(source.root),
    );
    // A running rollout's held clusters are rendered at their pinned base, and said so (docs/rollouts.md).
    const pins = await commandPins(source.root, flags.target, owner, {
      kubeconfig: flags.kubeconfig,
      context: flags.context,
    });
    for (const line of heldLines(pins, selected)) process.stderr.write(`${line}\n`);
    const index = await loadDesiredIndex(source.root, source.revision, { clusters: selected });
    index.state.bases = pins.bases;
    return { desired: index.state, index, selected, owner, ...heldOf(pins, selected) };
  } catch (err) {
    if (err instanceof SourceError || err instanceof OwnerError) throw new UserError(err.message, EXIT.failure);
    throw err;
  }
}

/** The held clusters of a command's selection, for the plan (none: nothing). */
function heldOf(pins: CommandPins, selected: readonly string[]): { held?: Record<string, string> } {
  const held = [...pins.held]
    .filter(([c]) => selected.length === 0 || selected.includes(c))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return held.length > 0 ? { held: Object.fromEntries(held) } : {};
}

/**
 * Fails (UnknownClusterError, exit 1) before anything is planned or applied when a `--cluster` name has no folder in
 * the repository and nothing of it is live on the target; a removed cluster whose objects are live is not unknown.
 */
export async function requireKnownClusters(target: Target, desired: DesiredState, flags: TargetFlags): Promise<void> {
  if (desired.missing.length === 0) return;
  const nowhere = await clustersNowhere(target, desired);
  if (nowhere.length === 0) return;
  const where = flags.repo ? maskUrlCredentials(flags.repo) : desired.root;
  throw new UnknownClusterError(
    nowhere,
    (n) => [`no folder clusters/${n} in ${where}`, `nothing of it on ${target.description}`],
    clusterFolderNames(desired.root),
  );
}

export async function openTargetForCommand(flags: TargetFlags): Promise<Target> {
  try {
    return await openTarget(flags.target, { kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (err) {
    if (err instanceof TargetSpecError || /kubeconfig|context/.test((err as Error).message))
      throw new UserError((err as Error).message, EXIT.failure);
    throw err;
  }
}

interface DiffFlags extends TargetFlags {
  exitCode?: boolean;
  force?: boolean;
  output: string;
}

export function register(program: Command): void {
  withTargetOptions(
    program
      .command("diff")
      .summary("show what vc apply would change on the target")
      .description(
        "show what vc apply would change: a unified diff per object between the live target and the repository " +
          "(fields vc manages only; Secret values masked), then 'N to create, N to update, N to delete, N unchanged'",
      ),
  )
    .option("--exit-code", "exit 0 when nothing would change, 1 when something would (drift), 2 on errors")
    .option(
      "--force",
      "plan as vc apply --force would: objects whose change the API server refuses in place are shown as recreated " +
        "instead of blocking their cluster",
    )
    .option(
      "-o, --output <format>",
      `output format: ${PLAN_FORMATS.join(", ")} (markdown suits a pull-request comment)`,
      "text",
    )
    .action(
      action(async (path: string | undefined, flags: DiffFlags) => {
        const format = parseOutputFormat(flags.output, PLAN_FORMATS);
        // The run is planned a chunk at a time: memory follows the chunk.
        const { desired, index, selected, owner, held } = await indexForCommand(path, flags);
        const target = await openTargetForCommand(flags);
        const spill = new DiffSpill();
        // A diff writes no record: one LIST of the host's records answers every read of them in the run (its source's
        // migrations and contested folders, run-time suspensions, the plan).
        target.startUnit?.({ fleet: true });
        try {
          await requireKnownClusters(target, desired, flags);
          for (const line of await prepareRecords(target, desired, owner, { dryRun: true }))
            process.stderr.write(`${line}\n`);
          const suspendedAtRunTime = (await readRunTimeSuspension(target, desired, selected))?.suspended;
          const fleetOpts = {
            prune: !!flags.prune,
            allowMassPrune: false,
            force: !!flags.force,
            selected,
            owner,
            suspendedAtRunTime,
          };
          // A fleet's report keeps its diffs in memory up to a bound, then in a temporary file until printed.
          // The host's live objects come from one paged LIST per kind; why the rest had to be read chunk by chunk is
          // said.
          const onFallBack = (why: string) =>
            process.stderr.write(
              `warning: ${escapeControls(why)}; reading the live objects a chunk of clusters at a time instead\n`,
            );
          const report = await planFleet(target, index, fleetOpts, { spill, onFallBack });
          if (held) report.held = held;
          writePlanReport(report, format, (text) => process.stdout.write(text), {
            colour: format === "text" && useColour(process.stdout),
          });
          if (report.errors.length > 0) return flags.exitCode ? EXIT.failure : EXIT.invalid;
          if (flags.exitCode && report.plans.some(hasChanges)) return EXIT.invalid;
          return EXIT.ok;
        } finally {
          spill.close();
          await target.close();
        }
      }),
    );
}
