// `vc create <name> -n <namespace> -f <values_file>`: a new cluster folder committed on a branch; --apply applies it too.
import type { Command } from "commander";
import { action, EXIT, UserError } from "./common.js";
import { formatDiagnostic } from "../model/diagnostic.js";
import { closeHosts } from "./host-options.js";
import { createCluster, CreateError, exportCommit } from "../ops/create.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadDesiredIndex } from "../pipeline/load.js";
import { applyFleet } from "../pipeline/fleet.js";
import { fleetLocation } from "../git/origin.js";
import { chooseOwner } from "../model/owner.js";
import { KubeClient } from "../host/client.js";
import { KubeTarget } from "../sinks/kube/target.js";

interface CreateFlags {
  namespace: string;
  file: string;
  repo: string;
  branch?: string;
  apply?: boolean;
  kubeconfig?: string;
  context?: string;
}

export function register(program: Command): void {
  program
    .command("create <name>")
    .summary("create a virtual cluster's folder from a values file")
    .description(
      "create a virtual cluster from a values file: validates it and commits clusters/<name>/values.yaml and cluster.yaml " +
        "on a new branch create/<name>, ready for a pull request, without switching to it (your checked-out branch, index and files stay as they are); " +
        "refuses an existing name; --apply also applies the committed cluster to the host at once",
    )
    .requiredOption("-n, --namespace <ns>", "host namespace of the new virtual cluster")
    .requiredOption("-f, --file <values_file>", "the values file")
    .option("--repo <dir>", "repository root (a git work tree)", ".")
    .option("--branch <name>", "branch to commit on (default create/<name>)")
    .option("--apply", "also apply the new cluster to the host now (server-side apply, as vc apply)")
    .option("--kubeconfig <file>", "kubeconfig of the host cluster, for --apply")
    .option("--context <name>", "kubeconfig context of the host cluster, for --apply")
    .action(
      action(async (name: string, flags: CreateFlags) => {
        let result;
        try {
          result = await createCluster({
            repo: flags.repo,
            name,
            namespace: flags.namespace,
            valuesFile: flags.file,
            branch: flags.branch,
          });
        } catch (err) {
          if (err instanceof CreateError) {
            for (const d of err.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
            throw new UserError(err.message, EXIT.invalid);
          }
          if (err instanceof Error && /invalid virtual cluster name/.test(err.message))
            throw new UserError(err.message, EXIT.invalid);
          throw err;
        }
        for (const d of result.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
        process.stdout.write(
          `committed ${result.files.join(" and ")} on branch ${result.branch} (commit ${result.commit.slice(0, 12)}); your checked-out branch was not switched: git switch ${result.branch} to see the files\n`,
        );
        process.stdout.write(`open a pull request: git push -u origin ${result.branch}\n`);
        if (!flags.apply) return EXIT.ok;
        let client: KubeClient | undefined;
        let scratch: string | undefined;
        try {
          client = KubeClient.open({ kubeconfig: flags.kubeconfig, context: flags.context });
          // What was committed is applied (the work tree does not hold it): the commit's files, written to a scratch folder.
          scratch = mkdtempSync(join(tmpdir(), "vc-create-"));
          await exportCommit(flags.repo, result.commit, scratch);
          const index = await loadDesiredIndex(scratch, result.commit, { clusters: [name] });
          if (index.state.errors.length)
            throw new UserError(
              `cannot apply ${name}: ${index.state.errors.map((e) => e.message).join("; ")}`,
              EXIT.invalid,
            );
          // The owner name vc apply and the reconciler of this repository record (model/owner.ts).
          const owner = chooseOwner(undefined, await fleetLocation(resolve(flags.repo)));
          const report = await applyFleet(
            new KubeTarget(client),
            index,
            { prune: false, allowMassPrune: false, selected: [name], dryRun: false, owner },
            { keepResults: true },
          );
          const problems = [
            ...report.errors.map((e) => e.message),
            ...report.results.flatMap((r) =>
              r.results
                .filter((x) => x.outcome === "failed")
                .map((x) => `${x.ref.kind} ${x.ref.name}: ${x.message ?? "failed"}`),
            ),
          ];
          if (problems.length) throw new UserError(`applying ${name}: ${problems.join("; ")}`, EXIT.failure);
          const applied = report.results.reduce(
            (n, r) => n + r.results.filter((x) => x.outcome !== "unchanged").length,
            0,
          );
          process.stdout.write(`applied ${applied} object(s) of ${name} to ${client.contextName}\n`);
          return EXIT.ok;
        } catch (err) {
          if (err instanceof UserError) throw err;
          throw new UserError(
            `the cluster was committed but applying it failed: ${(err as Error).message}; run vc apply --cluster ${name} --target kube`,
            EXIT.failure,
          );
        } finally {
          client?.close();
          closeHosts();
          if (scratch) rmSync(scratch, { recursive: true, force: true });
        }
      }),
    );
}
