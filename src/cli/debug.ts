// `vc debug collect` (a diagnostic bundle) and `vc debug shell` (a shell in the control-plane pod).
import { escapeControls } from "../model/escape.js";
import type { Command } from "commander";
import { action, EXIT } from "./common.js";
import {
  hostFrom,
  requireKnownCluster,
  requireNamespace,
  userErrors,
  withHostOptions,
  type HostFlags,
} from "./host-options.js";
import { findCluster } from "../ops/cluster-ref.js";
import { collectDebug, defaultBundleName } from "../ops/debug-collect.js";
import { debugShell, ShellError } from "../ops/debug-shell.js";

interface CollectFlags extends HostFlags {
  outputFilename?: string;
  repo: string;
  debug?: boolean;
}

interface ShellFlags extends HostFlags {
  repo: string;
  shell: string;
}

export function register(program: Command): void {
  const debug = program
    .command("debug")
    .summary("collect a debug bundle, or open a shell in a control plane")
    .description("diagnose a virtual cluster: collect a debug bundle, open a shell in its control plane");

  withHostOptions(
    debug
      .command("collect <name>")
      .summary("collect a debug bundle of a virtual cluster (secrets masked)")
      .description(
        "write a gzip tar whose top-level folder is debug/: the stateful set, pods, syncer logs (current and " +
          "previous), namespace events " +
          "sorted by .lastTimestamp, services, volume claims, effective config (masked), reconcile status and " +
          "history, the metrics API service, and a summary. " +
          "Secret values never enter it",
      ),
  )
    .option("--output-filename <file>", "the archive to write (default vc-debug-<name>-<time>.tar.gz)")
    .option("--repo <dir>", "repository root, for the cluster's effective values", ".")
    .option("--debug", "print each step")
    .action(
      action(async (name: string, flags: CollectFlags) => {
        return userErrors(async () => {
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          const namespace = cluster.namespace;
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          await requireNamespace(host, namespace, name);
          const result = await collectDebug(host, {
            cluster: name,
            namespace,
            values: cluster.values,
            valuesNote: cluster.valuesNote,
            outputFile: flags.outputFilename ?? defaultBundleName(name),
            log: flags.debug ? (l) => process.stderr.write(`debug: ${escapeControls(l)}\n`) : undefined,
          });
          process.stdout.write(`wrote ${result.file} (${result.entries.length} files)\n`);
          for (const n of result.notes) process.stderr.write(`note: ${escapeControls(n)}\n`);
          return EXIT.ok;
        }, [Error]);
      }),
    );

  withHostOptions(
    debug
      .command("shell <name>")
      .summary("open a shell in a virtual cluster's control plane")
      .description(
        "open an interactive shell in the control-plane pod <name>-0, container syncer (exec API over websocket, " +
          "with a TTY when stdin is a terminal)",
      ),
  )
    .option("--shell <command>", "the shell to run", "sh")
    .option("--repo <dir>", "repository root, to read clusters/<name>/cluster.yaml", ".")
    .action(
      action(async (name: string, flags: ShellFlags) => {
        return userErrors(async () => {
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          const namespace = cluster.namespace;
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          return debugShell(host, { cluster: name, namespace, command: [flags.shell] });
        }, [ShellError]);
      }),
    );
}
