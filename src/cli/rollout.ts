// `vc rollout status|pause|resume|abort`: show a fleet's progressive rollout, and ask the reconciler to pause, resume
// or abort it.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Option, type Command } from "commander";
import { fleetLocation } from "../git/origin.js";
import { chooseOwner, OwnerError } from "../model/owner.js";
import { escapeControls } from "../model/escape.js";
import { docsUrl } from "../model/package.js";
import { findRepoRoot } from "../repo/layout.js";
import { isRemote } from "../reconciler/source.js";
import { isFinal } from "../rollout/step.js";
import { RolloutStore, type StoredRollout } from "../rollout/store.js";
import { rolloutView } from "../rollout/view.js";
import type { RolloutRecord, RolloutRequest } from "../rollout/types.js";
import { askServer, recordedName } from "../host/identity.js";
import { KubeClient } from "../host/client.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { action, EXIT, formatColumns, formatData, parseOutputFormat, UserError } from "./common.js";

interface RolloutFlags {
  repo: string;
  owner?: string;
  kubeconfig?: string;
  context?: string;
  output?: string;
  clusters?: boolean;
}

const EXIT_HELP =
  "\nExit status: 0 done, 1 nothing to act on (no rollout, or it is already Completed or Aborted), 2 usage or " +
  "runtime failure.";

function common(cmd: Command): Command {
  return cmd
    .option("--repo <url|path>", "the fleet repository, whose location names the source (owner) of the rollout", ".")
    .option("--owner <name>", "the source's owner name, when not the default of --repo (as vc reconcile --owner)")
    .option("--kubeconfig <file>", "kubeconfig of the host the reconciler runs on")
    .option("--context <name>", "kubeconfig context");
}

export function register(program: Command): void {
  const rollout = program
    .command("rollout")
    .summary("show and steer the rollout of a fleet base change")
    .description(
      `show and steer the progressive rollout of a fleet base change (fleet/rollout.yaml; see ` +
        `${docsUrl("rollouts.md")})`,
    );
  common(rollout.command("status"))
    .summary("show the rollout: its phase, waves, clusters and their health")
    .description("show the rollout: its phase, the message, each wave with its clusters and their health")
    .option("--clusters", "list each wave's clusters by name with their health")
    .addOption(new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table"))
    .addHelpText("after", EXIT_HELP)
    .action(action(async (flags: RolloutFlags) => runStatus(flags)));
  const verbs: Array<[RolloutRequest["action"], string, string]> = [
    [
      "pause",
      "pause the rollout",
      "ask the reconciler to pause the rollout: nothing more moves until vc rollout resume",
    ],
    [
      "resume",
      "resume a paused or halted rollout",
      "ask the reconciler to resume a paused or halted rollout (a halted wave's health is checked again first) or " +
        "to end a manual pause between waves",
    ],
    [
      "abort",
      "abort the rollout: moved clusters return to their base",
      "ask the reconciler to abort the rollout: every moved cluster returns to the base it was at before",
    ],
  ];
  for (const [verb, summary, description] of verbs) {
    common(rollout.command(verb))
      .summary(summary)
      .description(description)
      .addOption(new Option("-o, --output <format>", "output format").choices(["text", "json", "yaml"]).default("text"))
      .addHelpText(
        "after",
        `\nThe request is written to vc's rollout record in the records namespace (field manager vc-rollout); the ` +
          `reconciler acts on it at its next tick and clears it.${EXIT_HELP}`,
      )
      .action(action(async (flags: RolloutFlags) => runRequest(verb, flags)));
  }
}

async function sourceOf(flags: RolloutFlags): Promise<string> {
  try {
    if (flags.owner !== undefined || isRemote(flags.repo))
      return chooseOwner(flags.owner, { repo: flags.repo, subdir: "" });
    const found = existsSync(flags.repo) ? findRepoRoot(flags.repo) : undefined;
    if (!found) {
      if (process.env.VC_OWNER) return chooseOwner(undefined, { repo: flags.repo, subdir: "" });
      throw new UserError(
        `no clusters/ folder at or above ${resolve(flags.repo)}: pass --repo with the fleet repository, or --owner`,
      );
    }
    return chooseOwner(undefined, await fleetLocation(found.root));
  } catch (err) {
    if (err instanceof OwnerError) throw new UserError(err.message, EXIT.failure);
    throw err;
  }
}

function open(flags: RolloutFlags): { target: KubeTarget; store: RolloutStore } {
  let client: KubeClient;
  try {
    client = KubeClient.open({ kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (err) {
    throw new UserError(`cannot load the host kubeconfig: ${(err as Error).message}`, EXIT.failure);
  }
  const target = new KubeTarget(client);
  return { target, store: new RolloutStore(client, target.records.namespace, target.records.guard) };
}

function formatStatus(r: RolloutRecord, withClusters: boolean): string {
  const v = rolloutView(r);
  const lines = [
    `rollout ${r.id}: ${r.phase}${v.wave ? `, wave ${v.wave.index + 1}/${v.wave.of} (${v.wave.name})` : ""}`,
    `to base ${r.to.digest.slice(0, 12)}${r.to.revision ? ` (revision ${r.to.revision.slice(0, 12)})` : ""}, ` +
      `started ${r.started}`,
    escapeControls(r.message),
  ];
  if (r.request)
    lines.push(`pending request: ${r.request.action} by ${escapeControls(r.request.by)} at ${r.request.at}`);
  lines.push("");
  const table: string[][] = [["WAVE", "STATE", "CLUSTERS", "MOVED", "HEALTHY"]];
  for (const w of v.waves) table.push([w.name, w.state, String(w.count), String(w.moved), String(w.healthy)]);
  let out = `${lines.join("\n")}\n${formatColumns(table)}`;
  if (withClusters) {
    const rows: string[][] = [["WAVE", "CLUSTER", "BASE", "HEALTH", "REASON"]];
    for (const w of v.waves)
      for (const c of w.clusters) rows.push([w.name, c.name, c.base, c.health ?? "-", escapeControls(c.reason ?? "")]);
    out += `\n${formatColumns(rows)}`;
  }
  return out;
}

/** The source's rollout record as stored (none: undefined); a record vc did not write is an error, never acted on. */
async function readUndamaged(store: RolloutStore, source: string): Promise<StoredRollout> {
  const stored = await store.read(source);
  if (stored.damaged)
    throw new UserError(
      `the rollout record of ${source} in ${store.namespace} is not one vc wrote: ${stored.damaged}`,
      EXIT.failure,
    );
  return stored;
}

async function runStatus(flags: RolloutFlags): Promise<number> {
  const format = parseOutputFormat(flags.output ?? "table", ["table", "json", "yaml"] as const);
  const source = await sourceOf(flags);
  const { target, store } = open(flags);
  try {
    const stored = await readUndamaged(store, source);
    if (!stored.record) {
      if (format === "table") process.stdout.write(`no rollout for source ${source} in ${store.namespace}\n`);
      else process.stdout.write(formatData(null, format));
      return EXIT.invalid;
    }
    process.stdout.write(
      format === "table"
        ? formatStatus(stored.record, !!flags.clusters)
        : formatData(rolloutView(stored.record), format),
    );
    return EXIT.ok;
  } finally {
    await target.close();
  }
}

async function runRequest(verb: RolloutRequest["action"], flags: RolloutFlags): Promise<number> {
  const format = parseOutputFormat(flags.output ?? "text", ["text", "json", "yaml"] as const);
  const source = await sourceOf(flags);
  const { target, store } = open(flags);
  try {
    const r = (await readUndamaged(store, source)).record;
    if (!r || isFinal(r)) {
      const why = r ? `rollout ${r.id} is already ${r.phase}` : `no rollout for source ${source} in ${store.namespace}`;
      if (format === "text") process.stderr.write(`nothing to ${verb}: ${why}\n`);
      else process.stdout.write(formatData({ requested: false, reason: why }, format));
      return EXIT.invalid;
    }
    const { identity } = await askServer(store.client);
    const req: RolloutRequest = { action: verb, by: recordedName(identity), at: new Date().toISOString() };
    await store.request(source, req);
    if (format === "text")
      process.stdout.write(
        `asked the reconciler to ${verb} rollout ${r.id} (now ${r.phase}, wave ${r.wave + 1}/${r.waves.length} ` +
          `${r.waves[r.wave]?.name ?? ""}): it acts at its next tick\n`,
      );
    else process.stdout.write(formatData({ requested: true, rollout: r.id, phase: r.phase, request: req }, format));
    return EXIT.ok;
  } finally {
    await target.close();
  }
}
