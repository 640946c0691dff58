// `vc ui [path]`: serves the fleet page for the repository at PATH against a target, on 127.0.0.1 only.
import type { Command } from "commander";
import { DEFAULT_TARGET } from "../sinks/types.js";
import { TargetSpecError } from "../sinks/index.js";
import { SourceError } from "../pipeline/source.js";
import { serveLocalUi } from "../ui/serve.js";
import { action, EXIT, parseDuration, UserError } from "./common.js";

interface UiFlags {
  target: string;
  port: string;
  refresh: string;
  kubeconfig?: string;
  context?: string;
}

export function register(program: Command): void {
  program
    .command("ui [path]")
    .summary("serve the fleet page in a browser (127.0.0.1 only)")
    .description(
      "serve the fleet page for the repository at PATH (default .) against the target: each cluster's health, drift, " +
        "last applied commit and who applied it, history and the rollout, updated live; bound to 127.0.0.1 and " +
        "read-only. With --target kube the host is read with your kubeconfig, so the page shows what you may read",
    )
    .option("--target <target>", "kube (the host of the kubeconfig context) or dir:PATH", DEFAULT_TARGET)
    .option("--port <port>", "port on 127.0.0.1 (0: any free port)", "8090")
    .option("--refresh <duration>", "how long between two reads of the target (each changed cluster is pushed)", "5s")
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .addHelpText(
      "after",
      "\nThe page's API (GET /api/v1/clusters, /api/v1/clusters/NAME, /api/v1/rollout, /api/v1/events) answers with " +
        "the shapes vc list -o json and vc status -o json print. Stop with Ctrl-C.",
    )
    .action(
      action(async (path: string | undefined, flags: UiFlags) => {
        const port = Number(flags.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new UserError(`invalid --port "${flags.port}": use 0 to 65535`, EXIT.failure);
        let served;
        try {
          served = await serveLocalUi({
            path: path ?? ".",
            target: flags.target,
            kubeconfig: flags.kubeconfig,
            context: flags.context,
            refreshMs: parseDuration(flags.refresh),
            port,
          });
        } catch (err) {
          if (err instanceof SourceError) throw new UserError(err.message, EXIT.invalid);
          if (err instanceof TargetSpecError) throw new UserError(err.message, EXIT.failure);
          if ((err as NodeJS.ErrnoException).code === "EADDRINUSE")
            throw new UserError(`port ${port} of 127.0.0.1 is in use: pass --port`, EXIT.failure);
          throw err;
        }
        process.stdout.write(`serving the fleet page on ${served.url}\n`);
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            void served.close().then(resolve);
          };
          process.on("SIGINT", stop);
          process.on("SIGTERM", stop);
        });
        return EXIT.ok;
      }),
    );
}
