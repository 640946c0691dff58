// `vc list`: the virtual clusters the host knows with their live state; inside a fleet repository, its clusters too.
import type { Command } from "commander";
import { shortRevision } from "../git/dirty.js";
import { escapeControls } from "../model/escape.js";
import { action, EXIT, formatColumns, formatData, parseOutputFormat, UserError } from "./common.js";
import { hostFrom, userErrors, type HostFlags } from "./host-options.js";
import { KubeHost } from "../ops/host.js";
import type { ListRow } from "../ops/list.js";
import { listHostFleet } from "../ops/fleet-rows.js";
import { resolveSource, SourceError } from "../pipeline/source.js";
import { findRepoRoot } from "../repo/layout.js";

interface ListFlags extends HostFlags {
  output: string;
  repo?: string;
}

export function register(program: Command): void {
  program
    .command("list")
    .summary("list virtual clusters with their state, drift and health")
    .description(
      "list the virtual clusters the host knows (vc's status records and control planes with vc's managed label) " +
        "with their live state: host namespace, control-plane state " +
        "(running, pending, scaled down, restoring, absent), ready replicas, last applied revision, who applied it " +
        "and the result; " +
        "inside a fleet repository (or with --repo) also the repository's clusters the host does not have yet, and " +
        "whether the host has drifted from the repository; " +
        "and each cluster's health (Healthy, Progressing, Degraded with the first reason, Unknown)",
    )
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .option(
      "--repo <dir>",
      "repository root holding clusters/ (default: the current directory when it is in one; outside a repository " +
        "only the host is listed)",
    )
    .option("-o, --output <format>", "table, json or yaml", "table")
    .action(
      action(async (flags: ListFlags) => {
        const format = parseOutputFormat(flags.output, ["table", "json", "yaml"] as const);
        return userErrors(async () => {
          // Outside a fleet repository (and without --repo) only the host is listed.
          let repo: { root: string; revision: string } | undefined;
          if (flags.repo !== undefined || findRepoRoot(".")) {
            try {
              repo = await resolveSource({ path: flags.repo ?? "." });
            } catch (err) {
              if (err instanceof SourceError) throw new UserError(err.message, EXIT.invalid);
              throw err;
            }
          }
          const host = hostFrom(flags);
          if (!(host instanceof KubeHost)) throw new Error("vc list needs a Kubernetes host");
          const { rows, notes } = await listHostFleet(host, repo);
          for (const note of notes) process.stderr.write(`note: ${note}\n`);
          if (rows.length === 0 && format === "table") {
            process.stdout.write(
              repo
                ? "no virtual clusters in the repository or on the host\n"
                : `no virtual clusters on the host (context "${host.contextName}"); vc's records and control ` +
                    `planes are read from the host, run vc list in a fleet repository to see its clusters too\n`,
            );
            return EXIT.ok;
          }
          process.stdout.write(format === "table" ? formatList(rows) : formatData(rows, format));
          return EXIT.ok;
        }, [Error]);
      }),
    );
}

/** The table of `vc list`. */
export function formatList(rows: readonly ListRow[]): string {
  const header = [
    "NAME",
    "NAMESPACE",
    "CONTROL PLANE",
    "READY",
    "LAST APPLIED",
    "APPLIED BY",
    "RESULT",
    "DRIFT",
    "HEALTH",
  ];
  const cells = rows.map((r) => [
    r.name,
    r.namespace,
    r.controlPlane,
    r.ready,
    shortRevision(r.lastAppliedRevision),
    r.lastAppliedBy ?? "-",
    r.result ?? "-",
    r.drift,
    r.health,
  ]);
  const notes = rows.filter((r) => r.note).map((r) => escapeControls(`${r.name}: ${r.note}`));
  // Why a cluster is Degraded: the first reason, below the table.
  notes.push(
    ...rows
      .filter((r) => r.health === "Degraded" && r.healthReason)
      .map((r) => escapeControls(`${r.name}: Degraded: ${r.healthReason}`)),
  );
  return `${formatColumns([header, ...cells])}${notes.length ? `\n${notes.join("\n")}\n` : ""}`;
}
