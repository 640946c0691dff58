// `vc version`: this vc's version; with --target kube also the reconciler's and the API server's, read from the host.
import { Option, type Command } from "commander";
import { KubeClient } from "../host/client.js";
import { escapeControls } from "../model/escape.js";
import { clientVersion, hostVersions, type Versions } from "../ops/version.js";
import { action, EXIT, formatData, UserError } from "./common.js";

interface VersionFlags {
  target?: string;
  kubeconfig?: string;
  context?: string;
  output: "text" | "json" | "yaml";
}

export function register(program: Command): void {
  program
    .command("version")
    .summary("print vc's version (and the reconciler's and the server's)")
    .description(
      "print the version of this vc; with --target kube also the version of the reconciler running on the host (the " +
        "image of its Deployment in the records namespace) and of the host's API server",
    )
    .option("--target <target>", "kube: also read the reconciler's and the API server's versions from the host")
    .option("--kubeconfig <file>", "kubeconfig of the host cluster (default: KUBECONFIG, else ~/.kube/config)")
    .option("--context <name>", "kubeconfig context of the host cluster (default: the current context)")
    .addOption(new Option("-o, --output <format>", "output format").choices(["text", "json", "yaml"]).default("text"))
    .action(
      action(async (flags: VersionFlags) => {
        if (flags.target !== undefined && flags.target !== "kube")
          throw new UserError(`--target ${flags.target}: only kube has a reconciler and a server to ask`, EXIT.failure);
        let versions: Versions = { client: clientVersion() };
        if (flags.target === "kube") {
          let client: KubeClient;
          try {
            client = KubeClient.open({ kubeconfig: flags.kubeconfig, context: flags.context });
          } catch (err) {
            throw new UserError(`cannot load the host kubeconfig: ${(err as Error).message}`, EXIT.failure);
          }
          try {
            versions = await hostVersions(client);
          } finally {
            client.close();
          }
        }
        process.stdout.write(flags.output === "text" ? formatVersions(versions) : formatData(versions, flags.output));
        return EXIT.ok;
      }),
    );
}

function formatVersions(v: Versions): string {
  let out = `vc:          ${v.client.version} (node ${v.client.node})\n`;
  const r = v.reconciler;
  if (r)
    out +=
      "error" in r
        ? `reconciler:  unknown (${escapeControls(r.error)})\n`
        : `reconciler:  ${escapeControls(r.version)} (${escapeControls(r.deployment)}, ${r.ready} ready)\n`;
  const s = v.server;
  if (s)
    out +=
      "error" in s
        ? `server:      unknown (${escapeControls(s.error)})\n`
        : `server:      ${escapeControls(s.gitVersion)}\n`;
  return out;
}
