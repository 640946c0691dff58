// `vc doctor <name>`: reads the host and reports known problems of a virtual cluster with their resolutions.
import { NOT_VISIBLE } from "../ops/visible.js";
import type { Command } from "commander";
import { action, EXIT, formatData, parseOutputFormat } from "./common.js";
import {
  hostFrom,
  requireKnownCluster,
  requireNamespace,
  userErrors,
  withHostOptions,
  type HostFlags,
} from "./host-options.js";
import { findCluster } from "../ops/cluster-ref.js";
import { doctorExitCode } from "../ops/doctor/index.js";
import { doctorReport } from "../ops/doctor/report.js";
import { formatFindings } from "../ops/doctor/format.js";
import { docsUrl } from "../model/package.js";

interface DoctorFlags extends HostFlags {
  output: string;
  repo: string;
  strict?: boolean;
  server?: string;
}

export function register(program: Command): void {
  withHostOptions(
    program
      .command("doctor <name>")
      .summary("check a virtual cluster on the host for known failures")
      .description(
        `check a virtual cluster on the host for every failure the service documents ` +
          `(${docsUrl("troubleshooting.md")}): pods Pending and why, ` +
          "crash loops and their cause, the metrics integration, mesh routing, the control plane's pod, service " +
          "account and storage; " +
          "findings are errors, warnings or notes; exit 1 on errors (with --strict on warnings too), 0 otherwise",
      ),
  )
    .option("--repo <dir>", "repository root, for the cluster's values (integrations, persistence)", ".")
    .option("-o, --output <format>", "text, json or yaml", "text")
    .option("--strict", "exit 1 on warnings too (notes never fail)")
    .option(
      "--server <url>",
      "address of the virtual API server for the checks made inside the virtual cluster (its APIService list, " +
        "autoscalers' pod metrics); default: the server in its kubeconfig (Secret vc-<name>), as vc connect uses it",
    )
    .action(
      action(async (name: string, flags: DoctorFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "json", "yaml"] as const);
        return userErrors(async () => {
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          const namespace = cluster.namespace;
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          await requireNamespace(host, namespace, name);
          const report = await doctorReport(host, cluster, flags.server ? { virtualServer: flags.server } : {});
          if (report.notVisible) {
            const { remarks: _r, notChecked: _n, ...note } = report;
            process.stdout.write(
              format === "text"
                ? `virtual cluster ${name} (namespace ${namespace}): ${NOT_VISIBLE}, nothing checked\n`
                : formatData(note, format),
            );
            return EXIT.ok;
          }
          const findings = report.findings;
          if (format === "text")
            process.stdout.write(
              formatFindings(name, namespace, findings, report.notChecked ?? {}, report.remarks ?? []),
            );
          else process.stdout.write(formatData(report, format));
          return doctorExitCode(findings, flags.strict === true) === 1 ? EXIT.invalid : EXIT.ok;
        }, [Error]);
      }),
    );
}
