// `vc apply`: server-side apply of what differs, cluster by cluster, with prune behind a guard; results and a summary.
import type { Command } from "commander";
import { describeRef } from "../kube/object.js";
import { paint, useColour } from "../plan/format.js";
import { applyFleet, type FleetApplyReport } from "../target/fleet.js";
import { OUTCOMES, type ObjectResult, type Outcome } from "../target/types.js";
import { action, EXIT, parseOutputFormat, UserError } from "./common.js";
import { loadForCommand, openTargetForCommand, requireKnownClusters, withTargetOptions, type TargetFlags } from "./diff.js";

interface ApplyFlags extends TargetFlags {
  dryRun?: boolean;
  allowMassPrune?: boolean;
  force?: boolean;
  output: string;
  concurrency: string;
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
    .option("--concurrency <n>", "clusters applied at once", "4")
    .option("-o, --output <format>", "output format: text, json", "text")
    .action(
      action(async (path: string | undefined, flags: ApplyFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "json"] as const);
        const clusterConcurrency = Number(flags.concurrency);
        if (!Number.isInteger(clusterConcurrency) || clusterConcurrency < 1) throw new UserError(`--concurrency must be a positive integer, not "${flags.concurrency}"`);
        const { desired, selected, owner } = await loadForCommand(path, flags);
        const target = await openTargetForCommand(flags);
        const progress = progressPrinter();
        try {
          await requireKnownClusters(target, desired, flags);
          const report = await applyFleet(target, desired, {
            prune: !!flags.prune,
            allowMassPrune: !!flags.allowMassPrune,
            force: !!flags.force,
            dryRun: !!flags.dryRun,
            selected,
            owner,
            clusterConcurrency,
            onProgress: progress.update,
          });
          progress.end();
          process.stdout.write(format === "json" ? `${JSON.stringify(toJson(report, !!flags.dryRun), null, 2)}\n` : toText(report, !!flags.dryRun, useColour(process.stdout)));
          if (report.results.some((r) => r.counts.failed > 0)) return EXIT.failure;
          if (report.errors.length > 0 || report.results.some((r) => r.plan.blocked)) return EXIT.invalid;
          return EXIT.ok;
        } finally {
          await target.close();
        }
      }),
    );
}

function progressPrinter() {
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
      const line = `progress: ${done}/${total} objects (${Math.floor((done * 100) / total)}%), cluster ${cluster}`;
      process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    },
    end() {
      if (shown && tty) process.stderr.write("\n");
    },
  };
}

const PAST: Record<Outcome, string> = { created: "created", updated: "updated", deleted: "deleted", unchanged: "unchanged", failed: "failed", skipped: "skipped" };

export function outcomeLine(counts: Record<Outcome, number>): string {
  return OUTCOMES.map((o) => `${counts[o]} ${PAST[o]}`).join(", ");
}

export function toText(report: FleetApplyReport, dryRun: boolean, colour: boolean): string {
  const style = (st: Parameters<typeof paint>[0], s: string) => (colour ? paint(st, s) : s);
  const out: string[] = [];
  const total = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of report.results) {
    for (const o of OUTCOMES) total[o] += r.counts[o];
    // A blocked cluster's objects are all skipped for the one reason printed below: no line each.
    for (const res of r.results) if (res.outcome !== "unchanged" && !(r.plan.blocked && res.outcome === "skipped")) out.push(resultLine(res, style));
    out.push(style("bold", `cluster ${r.cluster}: ${outcomeLine(r.counts)}${dryRun ? ` (dry run${uncheckedNote(r.results)})` : ""}`));
    for (const k of r.plan.retained ?? []) out.push(style("yellow", `kept ${describeRef(k.ref)}: ${k.reason}`));
    if (r.plan.blocked) out.push(style("red", `! ${r.plan.blocked}`));
  }
  for (const name of report.suspended) out.push(`cluster ${name}: suspended in cluster.yaml, left alone`);
  for (const e of report.errors) out.push(style("red", `! cluster ${e.cluster}: ${e.message}`));
  out.push(`${outcomeLine(total)}${dryRun ? " (dry run: nothing was changed)" : ""}`);
  return `${out.join("\n")}\n`;
}

/** `; N not checked by the server: namespace X does not exist yet` for a dry run's unchecked creates. */
function uncheckedNote(results: readonly ObjectResult[]): string {
  const unchecked = results.filter((r) => r.checked === false);
  if (unchecked.length === 0) return "";
  const namespaces = [...new Set(unchecked.map((r) => r.ref.namespace))].sort().join(", ");
  return `; ${unchecked.length} not checked by the server: namespace ${namespaces} does not exist yet`;
}

function resultLine(r: ObjectResult, style: (st: Parameters<typeof paint>[0], s: string) => string): string {
  if (r.checked === false) return style("yellow", `${describeRef(r.ref)} ${r.message}`);
  const colour = r.outcome === "failed" ? "red" : r.outcome === "deleted" ? "red" : r.outcome === "skipped" ? "yellow" : "green";
  return style(colour, `${PAST[r.outcome]} ${describeRef(r.ref)}${r.message ? `: ${r.message}` : ""}`);
}

export function toJson(report: FleetApplyReport, dryRun: boolean): unknown {
  return {
    dryRun,
    clusters: report.results.map((r) => ({
      cluster: r.cluster,
      ok: r.ok,
      counts: r.counts,
      ...(r.plan.blocked ? { blocked: r.plan.blocked } : {}),
      ...(r.plan.retained ? { retained: r.plan.retained.map((k) => ({ ...k.ref, reason: k.reason })) } : {}),
      durationMs: r.durationMs,
      results: r.results.filter((x) => x.outcome !== "unchanged").map((x) => ({ outcome: x.outcome, apiVersion: x.ref.apiVersion, kind: x.ref.kind, namespace: x.ref.namespace, name: x.ref.name, ...(x.message ? { message: x.message } : {}), ...(x.checked === false ? { checked: false } : {}) })),
    })),
    suspended: report.suspended,
    errors: report.errors,
  };
}
