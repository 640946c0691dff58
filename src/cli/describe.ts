// `vc describe <name>`: a virtual cluster's effective configuration and, unless --config-only, its live state on the host.
import type { Command } from "commander";
import { dump } from "js-yaml";
import { action, EXIT, formatData, parseOutputFormat, UserError } from "./common.js";
import { hostFrom, userErrors, withHostOptions, type HostFlags } from "../ops/cli-support.js";
import { checkClusterName, hostNamespaceOf } from "../ops/cluster-ref.js";
import { maskValues } from "../model/secrets.js";
import { clusterValues } from "../ops/repo-values.js";
import { compact, describeCluster, formatDescription } from "../ops/describe.js";

interface DescribeFlags extends HostFlags {
  configOnly?: boolean;
  output: string;
  repo: string;
}

export function register(program: Command): void {
  withHostOptions(
    program
      .command("describe <name>")
      .description(
        "show a virtual cluster: with --config-only its effective values (defaults merged, secrets masked) as YAML; otherwise also its host namespace, " +
          "images, control-plane state, reconcile status and revisions, synced mesh objects with their host names, and the metrics API service state",
      ),
  )
    .option("--config-only", "only the effective values (read from the repository; the host is not contacted)")
    .option("--repo <dir>", "repository root holding clusters/<name>", ".")
    .option("-o, --output <format>", "text, yaml or json (--config-only: yaml or json)", "text")
    .action(
      action(async (name: string, flags: DescribeFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "yaml", "json"] as const);
        return userErrors(async () => {
          checkClusterName(name);
          const repo = clusterValues(flags.repo, name);
          if (flags.configOnly) {
            if (!repo.found) throw new UserError(`no folder clusters/${name} under ${flags.repo}: pass --repo, or see vc list`, EXIT.invalid);
            if (!repo.values) throw new UserError(`clusters/${name} has invalid values: ${repo.error}`, EXIT.invalid);
            process.stdout.write(formatData(maskValues(repo.values), format === "json" ? "json" : "yaml"));
            return EXIT.ok;
          }
          const namespace = hostNamespaceOf(name, flags.namespace, flags.repo);
          const host = hostFrom(flags);
          const d = await describeCluster(host, {
            cluster: name,
            namespace,
            values: repo.found ? repo.values : undefined,
            valuesNote: repo.found ? repo.error : `no folder clusters/${name} under ${flags.repo}`,
          });
          if (format === "text") {
            process.stdout.write(formatDescription(d));
            if (d.config) process.stdout.write(`${dump(d.config, { sortKeys: true, noRefs: true, lineWidth: -1 }).trimEnd().replace(/^/gm, "  ")}\n`);
          } else {
            process.stdout.write(formatData(compact(d), format));
          }
          return EXIT.ok;
        }, [Error]);
      }),
    );
}
