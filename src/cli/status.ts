// `vc status [--cluster NAME]`: the reconcile status of each cluster as kept on the target (its record in the records
// namespace, or a dir: file).
import { Option, type Command } from "commander";
import { shortRevision } from "../git/dirty.js";
import { actorOf, appliedBy, type ClusterStatus } from "../records/status.js";
import { openTarget, TargetSpecError } from "../sinks/index.js";
import { DEFAULT_TARGET } from "../sinks/types.js";
import { clusterFolderNames, findRepoRoot } from "../repo/layout.js";
import { escapeControls } from "../model/escape.js";
import {
  action,
  EXIT,
  formatColumns,
  formatData,
  parseOutputFormat,
  UnknownClusterError,
  UserError,
} from "./common.js";

interface StatusFlags {
  cluster?: string;
  target: string;
  kubeconfig?: string;
  context?: string;
  output: string;
}

export function register(program: Command): void {
  program
    .command("status")
    .summary("show each cluster's reconcile status")
    .description(
      "show each cluster's reconcile status: last applied and attempted revision, who applied it (the reconciler, " +
        "or vc apply and its user), result, the health its last reconciliation saw, message",
    )
    .option(
      "--cluster <name>",
      "only this cluster, with every reconciliation kept (its status's and the older history)",
    )
    .option("--target <target>", "kube (the host of the kubeconfig context) or dir:PATH", DEFAULT_TARGET)
    .option("--kubeconfig <file>", "kubeconfig file")
    .option("--context <name>", "kubeconfig context")
    .addOption(new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table"))
    .addHelpText(
      "after",
      "\nExit status: 0 every cluster applied or suspended, 1 a cluster is invalid, failed or blocked (or " +
        "--cluster names one without a status), 2 runtime failure.",
    )
    .action(action(async (flags: StatusFlags) => runStatus(flags)));
}

async function runStatus(flags: StatusFlags): Promise<number> {
  const format = parseOutputFormat(flags.output, ["table", "json", "yaml"] as const);
  let target;
  try {
    target = await openTarget(flags.target, { kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  try {
    const store = target.statusStore();
    let statuses = await store.list();
    if (flags.cluster) {
      statuses = statuses.filter((s) => s.cluster === flags.cluster);
      if (statuses.length === 0) throw noStatus(flags.cluster, target.description);
      statuses[0]!.history = await store.history(statuses[0]!);
    }
    if (format === "table") process.stdout.write(flags.cluster ? formatDetail(statuses[0]!) : formatTable(statuses));
    else process.stdout.write(formatData(flags.cluster ? statuses[0] : statuses, format));
    return statuses.some((s) => s.result === "invalid" || s.result === "failed" || s.result === "blocked")
      ? EXIT.invalid
      : EXIT.ok;
  } catch (err) {
    if (err instanceof TargetSpecError) throw new UserError(err.message);
    throw err;
  } finally {
    await target.close();
  }
}

/**
 * No status for the cluster asked for: not reconciled there yet when the repository in the current folder has it,
 * else an unknown cluster (the same error as every command's).
 */
function noStatus(cluster: string, target: string): UserError {
  const repo = findRepoRoot(".");
  const folders = repo ? clusterFolderNames(repo.root) : undefined;
  if (folders?.includes(cluster))
    return new UserError(
      `cluster ${cluster} has no status on ${target}: it has not been reconciled there`,
      EXIT.invalid,
    );
  return new UnknownClusterError(
    [cluster],
    (n) => [...(repo ? [`no folder clusters/${n} in ${repo.root}`] : []), `no status for it on ${target}`],
    folders,
  );
}

const short = shortRevision;

export function formatTable(statuses: ClusterStatus[]): string {
  if (statuses.length === 0) return "no cluster has been reconciled on this target\n";
  const rows = [
    ["CLUSTER", "NAMESPACE", "RESULT", "APPLIED", "APPLIED BY", "ATTEMPTED", "LAST ATTEMPT", "HEALTH", "MESSAGE"],
  ];
  for (const s of statuses) {
    rows.push([
      s.cluster,
      s.hostNamespace,
      s.suspendedBy ? "suspended" : (s.result ?? "-"),
      short(s.lastAppliedRevision),
      appliedBy(s),
      short(s.lastAttemptedRevision),
      s.lastAttemptTime ?? "-",
      s.health ?? "-",
      s.suspendedBy ? `suspended by ${s.suspendedBy}` : (s.message ?? ""),
    ]);
  }
  return formatColumns(rows);
}

export function formatDetail(s: ClusterStatus): string {
  const e = escapeControls;
  let out =
    `cluster:           ${e(s.cluster)}\nhost namespace:    ${e(s.hostNamespace)}\nresult:            ` +
    `${s.result ?? "-"}\nmessage:           ${e(s.message ?? "")}\n`;
  if (s.health) out += `health:            ${s.health}${s.healthReason ? `: ${e(s.healthReason)}` : ""}\n`;
  out +=
    `applied revision:  ` +
    `${e(s.lastAppliedRevision ?? "-")}${s.lastAppliedTime ? ` (${e(s.lastAppliedTime)})` : ""}\n`;
  if (s.lastAppliedRevision) out += `applied by:        ${e(appliedBy(s))}\n`;
  out +=
    `attempted:         ` +
    `${e(s.lastAttemptedRevision ?? "-")}${s.lastAttemptTime ? ` (${e(s.lastAttemptTime)})` : ""}\n`;
  if (s.suspendedBy) out += `suspended by:      ${e(s.suspendedBy)}\n`;
  if (s.history.length === 0) return out;
  const rows = [
    [
      "REVISION",
      "TIME",
      "DURATION",
      "RESULT",
      "BY",
      "CREATED",
      "UPDATED",
      "DELETED",
      "UNCHANGED",
      "FAILED",
      "HEALTH",
      "MESSAGE",
    ],
  ];
  for (const r of s.history) {
    const c = r.counts;
    rows.push([
      short(r.revision),
      r.time,
      `${r.durationMs}ms`,
      r.result,
      actorOf(r),
      String(c.created),
      String(c.updated),
      String(c.deleted),
      String(c.unchanged),
      String(c.failed),
      r.health ?? "-",
      r.message ?? "",
    ]);
  }
  return `${out}\n${formatColumns(rows)}`;
}
