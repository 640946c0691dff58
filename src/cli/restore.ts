// `vc restore <name> <oci_reference>`: restore a virtual cluster's store from a backup artifact in an OCI registry.
import type { Command } from "commander";
import { action, EXIT, parseDuration } from "./common.js";
import { hostFrom, requireKnownCluster, userErrors, withHostOptions, type HostFlags } from "./host-options.js";
import { findCluster } from "../ops/cluster-ref.js";
import { restore, RestoreError } from "../ops/restore.js";
import { credentialsFor } from "../ops/oci/auth.js";
import { parseReference, OciReferenceError } from "../ops/oci/reference.js";
import { BackupError } from "../ops/oci/backup.js";
import { RegistryError } from "../ops/oci/client.js";

interface RestoreFlags extends HostFlags {
  image?: string;
  plainHttp?: boolean;
  stopTimeout: string;
  timeout: string;
  repo: string;
}

/** The signals that interrupt a restore with its clean-up (ops/restore.ts RestoreOptions.signal). */
const INTERRUPTS = ["SIGINT", "SIGTERM"] as const;

export function register(program: Command): void {
  withHostOptions(
    program
      .command("restore <name> <oci_reference>")
      .summary("restore a virtual cluster from a backup in an OCI registry")
      .description(
        "restore a virtual cluster from a backup in an OCI registry ([oci://]registry/repo:tag or @sha256:...): " +
          "checks the artifact first, " +
          "then suspends vc's reconciliation of the cluster, scales the control plane to 0, runs a restore pod, " +
          "scales back and resumes. " +
          "Registry credentials: VC_REGISTRY_USERNAME/VC_REGISTRY_PASSWORD or the docker config",
      ),
  )
    .option("--image <image>", "image of the restore pod (default: the control plane's syncer image)")
    .option("--plain-http", "talk HTTP to the registry (default only for localhost)")
    .option("--stop-timeout <duration>", "how long the control plane may take to stop", "5m")
    .option("--timeout <duration>", "how long the restore pod may run", "30m")
    .option("--repo <dir>", "repository root, to read clusters/<name>/cluster.yaml", ".")
    .action(
      action(async (name: string, reference: string, flags: RestoreFlags) => {
        const stopTimeoutMs = parseDuration(flags.stopTimeout);
        const restoreTimeoutMs = parseDuration(flags.timeout);
        return userErrors(async () => {
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          const namespace = cluster.namespace;
          const ref = parseReference(reference);
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          // Ctrl-C, and SIGTERM (a CI job cancelled, kill, a pod stopped), end the waits with the right clean-up
          // instead of killing vc mid-way; a second signal kills it as usual.
          const interrupt = new AbortController();
          const onSignal = () => interrupt.abort();
          for (const sig of INTERRUPTS) process.once(sig, onSignal);
          const report = await restore(host, {
            signal: interrupt.signal,
            cluster: name,
            namespace,
            reference,
            credentials: credentialsFor(ref.registry),
            plainHttp: flags.plainHttp,
            image: flags.image,
            stopTimeoutMs,
            restoreTimeoutMs,
            log: (line) => process.stderr.write(`${line}\n`),
          }).finally(() => {
            for (const sig of INTERRUPTS) process.off(sig, onSignal);
          });
          process.stdout.write(
            `restored ${name} (namespace ${namespace}) from ${report.backup.pinned}; control plane back at ` +
              `${report.replicas} replica(s)\n`,
          );
          return EXIT.ok;
        }, [RestoreError, OciReferenceError, BackupError, RegistryError]);
      }),
    );
}
