// `vc doctor <name>`: reads the host and reports known problems of a virtual cluster with their resolutions.
import { NOT_VISIBLE, NotVisibleError } from "../ops/visible.js";
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
import { gatherSnapshot } from "../ops/doctor/gather.js";
import { countBySeverity, diagnose, doctorExitCode } from "../ops/doctor/index.js";
import { formatFindings } from "../ops/doctor/format.js";
import { docsUrl } from "../model/package.js";
import { remarks } from "../ops/doctor/context.js";
import { meshObjectsOf } from "../ops/doctor/mesh-sync.js";

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
        `check a virtual cluster on the host for every failure the service documents (${docsUrl("troubleshooting.md")}): pods Pending and why, ` +
          "crash loops and their cause, the metrics integration, mesh routing, the control plane's pod, service account and storage; " +
          "findings are errors, warnings or notes; exit 1 on errors (with --strict on warnings too), 0 otherwise",
      ),
  )
    .option("--repo <dir>", "repository root, for the cluster's values (integrations, persistence)", ".")
    .option("-o, --output <format>", "text, json or yaml", "text")
    .option("--strict", "exit 1 on warnings too (notes never fail)")
    .option(
      "--server <url>",
      "address of the virtual API server for the checks made inside the virtual cluster (its APIService list, autoscalers' pod metrics); default: the server in its kubeconfig (Secret vc-<name>), as vc connect uses it",
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
          const snapshot = await gatherSnapshot(host, name, namespace, cluster.values, {
            ...(cluster.rendered ? { rendered: meshObjectsOf(cluster.rendered) } : {}),
            ...(flags.server ? { virtualServer: flags.server } : {}),
          }).catch((err: unknown) => {
            if (err instanceof NotVisibleError) return undefined;
            throw err;
          });
          if (!snapshot) {
            const note = {
              cluster: name,
              namespace,
              problems: 0,
              counts: countBySeverity([]),
              findings: [],
              notVisible: NOT_VISIBLE,
            };
            process.stdout.write(
              format === "text"
                ? `virtual cluster ${name} (namespace ${namespace}): ${NOT_VISIBLE}, nothing checked\n`
                : formatData(note, format),
            );
            return EXIT.ok;
          }
          const findings = diagnose(snapshot);
          const unreadable = snapshot.unreadable ?? {};
          const said = remarks(snapshot, cluster.found ? cluster.valuesNote : undefined);
          if (format === "text") process.stdout.write(formatFindings(name, namespace, findings, unreadable, said));
          else {
            const counts = countBySeverity(findings);
            process.stdout.write(
              formatData(
                {
                  cluster: name,
                  namespace,
                  problems: counts.error + counts.warning,
                  counts,
                  remarks: said,
                  findings,
                  notChecked: unreadable,
                },
                format,
              ),
            );
          }
          return doctorExitCode(findings, flags.strict === true) === 1 ? EXIT.invalid : EXIT.ok;
        }, [Error]);
      }),
    );
}
