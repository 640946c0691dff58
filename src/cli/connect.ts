// `vc connect` and `vc disconnect`: switch the user's kubeconfig to a virtual cluster and back.
import type { Command } from "commander";
import { action, EXIT, UserError } from "./common.js";
import { hostFrom, requireKnownCluster, userErrors, withHostOptions, type HostFlags } from "./host-options.js";
import { findCluster, kubeconfigSecretName } from "../ops/cluster-ref.js";
import { checkVirtualServer } from "../ops/connect-check.js";
import {
  addContext,
  ConnectError,
  disconnect,
  printKubeconfig,
  readVirtualKubeconfig,
  standaloneKubeconfig,
  userCertificate,
} from "../ops/connect.js";
import { certLine } from "../ops/cert.js";
import { userKubeconfigPath } from "../host/kubeconfig-file.js";
import { escapeControls } from "../model/escape.js";

interface ConnectFlags extends HostFlags {
  debug?: boolean;
  print?: boolean;
  server?: string;
  contextName?: string;
  check?: boolean;
  repo: string;
}

export function register(program: Command): void {
  withHostOptions(
    program
      .command("connect <name>")
      .summary("point your kubeconfig at a virtual cluster")
      .description(
        'point your kubeconfig at a virtual cluster: reads its kubeconfig from host secret vc-<name> (key "config"), ' +
          "checks that its API server answers (whoami), adds a context for it, switches to it and remembers the " +
          "previous context for vc disconnect. " +
          "A server that does not answer changes nothing (exit 2) and the message says how to reach it (--server, " +
          "kubectl port-forward)",
      ),
  )
    .option("--debug", "print each step")
    .option("--print", "print the virtual cluster's kubeconfig to stdout instead of changing yours")
    .option(
      "--server <url>",
      "use this API server address instead of the one in the secret (a port-forward or ingress URL)",
    )
    .option("--context-name <name>", "name of the new context (default vc_<name>_<namespace>_<host context>)")
    .option("--no-check", "write the context without first checking that the virtual API server answers (a whoami)")
    .option("--repo <dir>", "repository root, to read clusters/<name>/cluster.yaml", ".")
    .action(
      action(async (name: string, flags: ConnectFlags) => {
        await userErrors(async () => {
          const log = flags.debug
            ? (line: string) => process.stderr.write(`debug: ${escapeControls(line)}\n`)
            : undefined;
          const cluster = await findCluster(name, { repo: flags.repo, namespace: flags.namespace });
          const namespace = cluster.namespace;
          const host = hostFrom(flags);
          await requireKnownCluster(host, cluster, flags.repo);
          const virtual = await readVirtualKubeconfig(host, name, namespace, log);
          if (flags.print) {
            const standalone = standaloneKubeconfig(virtual, name, flags.server);
            process.stdout.write(printKubeconfig(standalone));
            const cert = userCertificate((standalone.users?.[0]?.user ?? {}) as Record<string, unknown>, log);
            if (cert) process.stderr.write(`${certLine(cert)}\n`);
            return EXIT.ok;
          }
          // Checked before the kubeconfig is touched: a server that does not answer leaves it as it was.
          const answer =
            flags.check === false
              ? undefined
              : await checkVirtualServer(standaloneKubeconfig(virtual, name, flags.server), {
                  name,
                  namespace,
                  hostContext: host.contextName,
                  secret: kubeconfigSecretName(name),
                  log,
                });
          const kubeconfigPath = userKubeconfigPath(flags.kubeconfig);
          const result = addContext(virtual, host.contextName, {
            name,
            namespace,
            kubeconfigPath,
            server: flags.server,
            contextName: flags.contextName,
            log,
          });
          process.stdout.write(
            `connected to virtual cluster ${name} (namespace ${namespace}) at ${escapeControls(result.server)}\n`,
          );
          process.stdout.write(
            `current context "${result.context}"; vc disconnect returns to "${result.previousContext || "(none)"}"\n`,
          );
          if (answer) process.stdout.write(`the virtual API server answers: ${answer.line}\n`);
          else process.stderr.write("warning: not checked whether the virtual API server answers (--no-check)\n");
          if (result.certificate) {
            const line = certLine(result.certificate);
            (result.certificate.state === "valid" ? process.stdout : process.stderr).write(`${line}\n`);
          } else if (log) {
            log("the user entry has no inline client certificate");
          }
          return EXIT.ok;
        }, [ConnectError, Error]);
      }),
    );

  program
    .command("disconnect")
    .summary("return your kubeconfig to its context before vc connect")
    .description(
      "return your kubeconfig to the context that was current before vc connect, and remove every context vc " +
        "connect added (with their cluster and user entries)",
    )
    .option("--kubeconfig <file>", "the kubeconfig file vc connect edited (default: KUBECONFIG, else ~/.kube/config)")
    .option("--keep", "keep the contexts, clusters and users vc connect added")
    .action(
      action((flags: { kubeconfig?: string; keep?: boolean }) => {
        const path = userKubeconfigPath(flags.kubeconfig);
        try {
          const r = disconnect(path, flags.keep);
          const removed = r.removed.length
            ? `removed ${r.removed.length === 1 ? "context" : "contexts"} ` +
              `${r.removed.map((c) => `"${c}"`).join(", ")} (with their cluster and user entries)`
            : "";
          const switched = r.switched
            ? `switched from "${r.from}" to "${r.to || "(no context)"}"`
            : `current context "${r.from}" was not made by vc connect: left as it is`;
          process.stdout.write(`${[switched, removed].filter(Boolean).join("; ")}\n`);
          return EXIT.ok;
        } catch (err) {
          if (err instanceof ConnectError) throw new UserError(err.message, EXIT.invalid);
          throw err;
        }
      }),
    );
}
