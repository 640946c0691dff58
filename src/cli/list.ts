// `vc list`: the repository's virtual clusters with their live state on the host.
import type { Command } from "commander";
import { shortRevision } from "../git/dirty.js";
import { action, EXIT, formatColumns, formatData, parseOutputFormat, UserError } from "./common.js";
import { hostFrom, userErrors, type HostFlags } from "./host-options.js";
import { KubeHost } from "../ops/host.js";
import { listClusters, type ListRow } from "../ops/list.js";
import { resolveSource, SourceError } from "../target/source.js";

interface ListFlags extends HostFlags {
  output: string;
  repo: string;
}

export function register(program: Command): void {
  program
    .command("list")
    .description(
      "list the virtual clusters of the repository with their live host state: host namespace, control-plane state " +
        "(running, pending, scaled down, restoring, absent), ready replicas, last applied revision, who applied it and the result, whether the host has drifted, and its health (Healthy, Progressing, Degraded with the first reason, Unknown)",
    )
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .option("--repo <dir>", "repository root holding clusters/", ".")
    .option("-o, --output <format>", "table, json or yaml", "table")
    .action(
      action(async (flags: ListFlags) => {
        const format = parseOutputFormat(flags.output, ["table", "json", "yaml"] as const);
        return userErrors(async () => {
          let source;
          try {
            source = await resolveSource({ path: flags.repo });
          } catch (err) {
            if (err instanceof SourceError) throw new UserError(err.message, EXIT.invalid);
            throw err;
          }
          const host = hostFrom(flags);
          if (!(host instanceof KubeHost)) throw new Error("vc list needs a Kubernetes host");
          const rows = await listClusters(host, source.root, source.revision);
          process.stdout.write(format === "table" ? formatList(rows) : formatData(rows, format));
          return EXIT.ok;
        }, [Error]);
      }),
    );
}

/** The table of `vc list`. */
export function formatList(rows: readonly ListRow[]): string {
  const header = ["NAME", "NAMESPACE", "CONTROL PLANE", "READY", "LAST APPLIED", "APPLIED BY", "RESULT", "DRIFT", "HEALTH"];
  const cells = rows.map((r) => [r.name, r.namespace, r.controlPlane, r.ready, shortRevision(r.lastAppliedRevision), r.lastAppliedBy ?? "-", r.result ?? "-", r.drift, r.health]);
  const notes = rows.filter((r) => r.note).map((r) => `${r.name}: ${r.note}`);
  // Why a cluster is Degraded: the first reason, below the table.
  notes.push(...rows.filter((r) => r.health === "Degraded" && r.healthReason).map((r) => `${r.name}: Degraded: ${r.healthReason}`));
  return `${formatColumns([header, ...cells])}${notes.length ? `\n${notes.join("\n")}\n` : ""}`;
}
