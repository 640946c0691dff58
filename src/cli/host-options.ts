// What the operation commands share on the command line: host options and turning operation errors into user errors.
import { resolve } from "node:path";
import type { Command } from "commander";
import { EXIT, UnknownClusterError, UserError } from "./common.js";
import { HostError, openHost, type Host } from "../ops/host.js";
import type { ClusterRef } from "../ops/cluster-ref.js";
import { clusterFolderNames } from "../repo/layout.js";

export interface HostFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** Adds `--kubeconfig`, `--context` and `-n/--namespace` to a command that reads the host. */
export function withHostOptions(
  cmd: Command,
  namespaceHelp = "host namespace of the virtual cluster (default: clusters/<name>/cluster.yaml, else vc-<name>)",
): Command {
  return cmd
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .option("-n, --namespace <ns>", namespaceHelp);
}

const opened: Host[] = [];

/** Opens the host, turning a bad kubeconfig into a user error. `closeHosts()` frees it when the command ends. */
export function hostFrom(flags: HostFlags): Host {
  try {
    const host = openHost({ kubeconfig: flags.kubeconfig, context: flags.context });
    opened.push(host);
    return host;
  } catch (err) {
    throw new UserError(`cannot load the host kubeconfig: ${(err as Error).message}`, EXIT.failure);
  }
}

export function closeHosts(): void {
  for (const h of opened.splice(0)) h.close();
}

/** Errors of the operations that are the user's to fix become UserErrors (no stack trace). */
function asUserError(err: unknown, known: Array<new (...a: never[]) => Error> = []): never {
  if (err instanceof UserError) throw err;
  if (err instanceof HostError) throw new UserError(err.message, EXIT.failure);
  if (known.some((k) => err instanceof k)) throw new UserError((err as Error).message, EXIT.failure);
  throw err;
}

/** Runs an operation body, mapping its known errors to user errors. */
export async function userErrors<T>(
  fn: () => Promise<T> | T,
  known: Array<new (...a: never[]) => Error> = [],
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    return asUserError(err, known);
  } finally {
    closeHosts();
  }
}

/**
 * Fails with a user error when the host namespace does not exist. A user allowed only inside the namespace
 * cannot read the Namespace object (403): then the check is left to the namespaced reads that follow.
 */
export async function requireNamespace(host: Host, namespace: string, cluster: string): Promise<void> {
  if ((await namespaceExists(host, namespace)) === false) {
    throw new UserError(
      `host namespace ${namespace} not found (context "${host.contextName}"): is ${cluster} applied? pass ` +
        `--namespace if it lives elsewhere`,
      EXIT.invalid,
    );
  }
}

/**
 * Fails with UnknownClusterError (exit 1, the message every command gives) when the cluster has no folder in the
 * repository and its host namespace does not exist. A cluster without a folder here whose namespace exists (made
 * from another repository, or removed with its Namespace kept) is known; so is any cluster for a user who may not
 * read Namespaces (403): the command goes on and says what it finds.
 */
export async function requireKnownCluster(host: Host, cluster: ClusterRef, repo: string): Promise<void> {
  if (cluster.found || (await namespaceExists(host, cluster.namespace)) !== false) return;
  throw new UnknownClusterError(
    [cluster.name],
    (n) => [
      `no folder clusters/${n} in ${resolve(repo)}`,
      `no host namespace ${cluster.namespace} on context "${host.contextName}" (pass --namespace if it lives ` +
        `elsewhere)`,
    ],
    clusterFolderNames(repo),
  );
}

/** Whether a host namespace exists; undefined when the user may not read it (403). */
async function namespaceExists(host: Host, namespace: string): Promise<boolean | undefined> {
  try {
    return (await host.get(`/api/v1/namespaces/${encodeURIComponent(namespace)}`)) !== undefined;
  } catch (err) {
    if (err instanceof HostError && err.status === 403) return undefined;
    throw err;
  }
}
