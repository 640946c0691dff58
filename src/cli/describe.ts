// `vc describe <name>`: a virtual cluster's effective configuration and, unless --config-only, its live state on the
// host.
import { escapeLines } from "../model/escape.js";
import type { Command } from "commander";
import { dump } from "js-yaml";
import { resolve } from "node:path";
import { action, EXIT, formatData, parseOutputFormat, UnknownClusterError, UserError } from "./common.js";
import { hostFrom, requireKnownCluster, userErrors, withHostOptions, type HostFlags } from "./host-options.js";
import { clusterFolderNames, findRepoRoot } from "../repo/layout.js";
import { findCluster } from "../ops/cluster-ref.js";
import { maskValues } from "../model/secrets.js";
import { compact, describeCluster, formatDescription, hostConfig } from "../ops/describe.js";
import { names } from "../render/meta.js";
import { KubeHost } from "../ops/host.js";
import { healthOfRepoCluster } from "../health/fleet.js";
import { resolveSource } from "../pipeline/source.js";

interface DescribeFlags extends HostFlags {
  configOnly?: boolean;
  output: string;
  repo: string;
}

export function register(program: Command): void {
  withHostOptions(
    program
      .command("describe <name>")
      .summary("show a virtual cluster: values, objects, health, events")
      .description(
        "show a virtual cluster: with --config-only its effective values (defaults merged, secrets masked) as " +
          "YAML; otherwise also its host namespace, " +
          "images, control-plane state, health, reconcile status and revisions, synced mesh objects with their " +
          "host names, and the metrics API service state",
      ),
  )
    .option(
      "--config-only",
      "only the effective values: inside a repository from its folder (the host is not contacted); outside one the " +
        "configuration the control plane runs with, from its config Secret vc-config-<name> on the host",
    )
    .option("--repo <dir>", "repository root holding clusters/<name>", ".")
    .option("-o, --output <format>", "text, yaml or json (--config-only: yaml or json)", "text")
    .action(
      action(async (name: string, flags: DescribeFlags) => {
        const format = parseOutputFormat(flags.output, ["text", "yaml", "json"] as const);
        return userErrors(async () => {
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          if (flags.configOnly) {
            if (!cluster.found && findRepoRoot(flags.repo)) {
              throw new UnknownClusterError(
                [name],
                (n) => [
                  `no folder clusters/${n} in ${resolve(flags.repo)} (inside a repository --config-only reads the ` +
                    `repository only)`,
                ],
                clusterFolderNames(flags.repo),
              );
            }
            if (!cluster.found) {
              // Outside a repository: the configuration the control plane runs with, from the host.
              const host = hostFrom(flags);
              const live = await hostConfig(host, name, cluster.namespace);
              if (!live) {
                throw new UnknownClusterError(
                  [name],
                  (n) => [
                    `no repository at ${resolve(flags.repo)}, and no config Secret ${names.configSecret(n)} in ` +
                      `namespace ${cluster.namespace} on context "${host.contextName}" (pass --namespace if it ` +
                      `runs elsewhere)`,
                  ],
                  clusterFolderNames(flags.repo),
                );
              }
              process.stderr.write(
                `note: no folder clusters/${name} here: the configuration the control plane runs with, from Secret ` +
                  `${cluster.namespace}/${names.configSecret(name)} on context "${host.contextName}"\n`,
              );
              process.stdout.write(formatData(live, format === "json" ? "json" : "yaml"));
              return EXIT.ok;
            }
            if (!cluster.values)
              throw new UserError(`clusters/${name} has invalid values: ${cluster.valuesNote}`, EXIT.invalid);
            process.stdout.write(formatData(maskValues(cluster.values), format === "json" ? "json" : "yaml"));
            return EXIT.ok;
          }
          const namespace = cluster.namespace;
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          const d = await describeCluster(host, {
            cluster: name,
            namespace,
            values: cluster.values,
            valuesNote: cluster.valuesNote,
          });
          // Health needs the rendered objects: only for a cluster the repository has.
          if (cluster.found && host instanceof KubeHost) {
            const source = await resolveSource({ path: flags.repo });
            d.health = await healthOfRepoCluster(host.client, source.root, source.revision, name);
          }
          if (format === "text") {
            process.stdout.write(formatDescription(d));
            if (d.config)
              process.stdout.write(
                `${escapeLines(dump(d.config, { sortKeys: true, noRefs: true, lineWidth: -1 }).trimEnd()).replace(/^/gm, "  ")}\n`,
              );
          } else {
            process.stdout.write(formatData(compact(d), format));
          }
          return EXIT.ok;
        }, [Error]);
      }),
    );
}
