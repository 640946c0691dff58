// `vc create <name> -n <namespace> -f <values_file>`: a new cluster folder committed on a branch; --apply applies it
// too.
import type { Command } from "commander";
import { action, EXIT, UserError } from "./common.js";
import { formatDiagnostic } from "../model/diagnostic.js";
import { closeHosts } from "./host-options.js";
import { createCluster, CreateError, exportCommit } from "../ops/create.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadDesiredIndex } from "../pipeline/load.js";
import { prepareRecords } from "../pipeline/prepare.js";
import { fleetLocation } from "../git/origin.js";
import { parseDuration } from "../model/duration.js";
import { chooseOwner, OwnerError } from "../model/owner.js";
import { KubeClient } from "../host/client.js";
import { KubeTarget } from "../sinks/kube/target.js";
import { applyExitCode, applyRepository } from "../ops/apply.js";
import { DEFAULT_HISTORY_LIMIT } from "../records/archive.js";
import { LOCK_TIMEOUT_OPTION, tellWait } from "./apply.js";
import type { SyncResult } from "../plan/types.js";

interface CreateFlags {
  namespace: string;
  file: string;
  repo: string;
  branch?: string;
  apply?: boolean;
  kubeconfig?: string;
  context?: string;
  owner?: string;
  lockTimeout: string;
}

export function register(program: Command): void {
  program
    .command("create <name>")
    .summary("create a virtual cluster's folder from a values file")
    .description(
      "create a virtual cluster from a values file: validates it and commits clusters/<name>/values.yaml and " +
        "cluster.yaml " +
        "on a new branch create/<name>, ready for a pull request, without switching to it (your checked-out " +
        "branch, index and files stay as they are); " +
        "refuses an existing name; --apply also applies the committed cluster to the host at once",
    )
    .requiredOption("-n, --namespace <ns>", "host namespace of the new virtual cluster")
    .requiredOption("-f, --file <values_file>", "the values file")
    .option("--repo <dir>", "repository root (a git work tree)", ".")
    .option("--branch <name>", "branch to commit on (default create/<name>)")
    .option("--apply", "also apply the new cluster to the host now (server-side apply, as vc apply)")
    .option("--kubeconfig <file>", "kubeconfig of the host cluster, for --apply")
    .option("--context <name>", "kubeconfig context of the host cluster, for --apply")
    .option(
      "--owner <name>",
      "owner name the --apply records the cluster under, as vc apply's --owner " +
        "(default $VC_OWNER, else derived from the repository)",
    )
    .option(...LOCK_TIMEOUT_OPTION)
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
          `committed ${result.files.join(" and ")} on branch ${result.branch} (commit ` +
            `${result.commit.slice(0, 12)}); your checked-out branch was not switched: git switch ${result.branch} ` +
            `to see the files\n`,
        );
        process.stdout.write(`open a pull request: git push -u origin ${result.branch}\n`);
        if (!flags.apply) return EXIT.ok;
        const lockWaitMs = parseDuration(flags.lockTimeout);
        let client: KubeClient | undefined;
        let target: KubeTarget | undefined;
        let scratch: string | undefined;
        try {
          // The owner name vc apply and the reconciler of this repository record (model/owner.ts): the cluster's
          // record is this source's from the start, so the merged branch's next vc apply finds it as its own.
          let owner: string;
          try {
            owner = chooseOwner(flags.owner, await fleetLocation(resolve(flags.repo)));
          } catch (err) {
            if (err instanceof OwnerError) throw new UserError(err.message, EXIT.failure);
            throw err;
          }
          client = KubeClient.open({ kubeconfig: flags.kubeconfig, context: flags.context });
          target = new KubeTarget(client);
          // What was committed is applied (the work tree does not hold it): the commit's files, written to a scratch
          // folder.
          scratch = mkdtempSync(join(tmpdir(), "vc-create-"));
          await exportCommit(flags.repo, result.commit, scratch);
          const index = await loadDesiredIndex(scratch, result.commit, { clusters: [name] });
          if (index.state.errors.length)
            throw new UserError(
              `cannot apply ${name}: ${index.state.errors.map((e) => e.message).join("; ")}`,
              EXIT.invalid,
            );
          for (const line of await prepareRecords(target, index.state, owner)) process.stderr.write(`${line}\n`);
          // As vc apply: the cluster's apply lease, its record and its status (revision, who, via apply) written.
          const synced: SyncResult[] = [];
          const { report, run } = await applyRepository(target, index, {
            onResults: (results) => void synced.push(...results),
            fleet: {
              prune: false,
              allowMassPrune: false,
              selected: [name],
              dryRun: false,
              owner,
              lockWaitMs,
              onWait: tellWait,
            },
            record: {
              revision: result.commit,
              via: "apply",
              owner,
              started: new Date(),
              selected: [name],
              historyLimit: DEFAULT_HISTORY_LIMIT,
            },
          });
          const problems = [
            ...report.errors.map((e) => e.message),
            ...(report.busy ?? []).map((b) => b.message),
            ...synced.flatMap((r) => [
              ...(r.plan.blocked ? [r.plan.blocked] : []),
              ...r.results
                .filter((x) => x.outcome === "failed")
                .map((x) => `${x.ref.kind} ${x.ref.name}: ${x.message ?? "failed"}`),
            ]),
            ...(run?.clusters ?? [])
              .filter((c) => c.outcome === "failed" || c.outcome === "not-owned")
              .map((c) => `its record: ${c.message ?? c.outcome}`),
          ];
          if (problems.length || applyExitCode(report, run) !== EXIT.ok)
            throw new UserError(
              `applying ${name}: ${problems.join("; ") || "not applied"}`,
              applyExitCode(report, run) || EXIT.failure,
            );
          const applied = synced.reduce((n, r) => n + r.results.filter((x) => x.outcome !== "unchanged").length, 0);
          process.stdout.write(`applied ${applied} object(s) of ${name} to ${client.contextName}\n`);
          process.stdout.write(`recorded ${name} at revision ${result.commit.slice(0, 12)} as source ${owner}\n`);
          return EXIT.ok;
        } catch (err) {
          if (err instanceof UserError) throw err;
          throw new UserError(
            `the cluster was committed but applying it failed: ${(err as Error).message}; run vc apply --cluster ` +
              `${name} --target kube`,
            EXIT.failure,
          );
        } finally {
          if (target) await target.close();
          else client?.close();
          closeHosts();
          if (scratch) rmSync(scratch, { recursive: true, force: true });
        }
      }),
    );
}
