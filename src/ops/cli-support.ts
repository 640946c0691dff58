// What the operation commands share on the command line: host options and turning operation errors into user errors.
import type { Command } from "commander";
import { EXIT, UserError } from "../cli/common.js";
import { HostError, openHost, type Host } from "./host.js";

export interface HostFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** Adds `--kubeconfig`, `--context` and `-n/--namespace` to a command that reads the host. */
export function withHostOptions(cmd: Command, namespaceHelp = "host namespace of the virtual cluster (default: clusters/<name>/cluster.yaml, else vc-<name>)"): Command {
  return cmd
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .option("-n, --namespace <ns>", namespaceHelp);
}

/** Opens the host, turning a bad kubeconfig into a user error. */
export function hostFrom(flags: HostFlags): Host {
  try {
    return openHost({ kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (err) {
    throw new UserError(`cannot load the host kubeconfig: ${(err as Error).message}`, EXIT.failure);
  }
}

/** Errors of the operations that are the user's to fix become UserErrors (no stack trace). */
export function asUserError(err: unknown, known: Array<new (...a: never[]) => Error> = []): never {
  if (err instanceof UserError) throw err;
  if (err instanceof HostError) throw new UserError(err.message, EXIT.failure);
  if (known.some((k) => err instanceof k)) throw new UserError((err as Error).message, EXIT.failure);
  throw err;
}

/** Runs an operation body, mapping its known errors to user errors. */
export async function userErrors<T>(fn: () => Promise<T> | T, known: Array<new (...a: never[]) => Error> = []): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    return asUserError(err, known);
  }
}
