// Entry point of `vc-metrics-proxy`: parses the flags, starts the proxy, stops it on SIGTERM/SIGINT.
import { CommanderError } from "commander";
import { EXIT, reportError } from "../model/errors.js";
import { parseFlags } from "./config.js";
import { startProxy } from "./proxy.js";

export async function main(argv: string[]): Promise<number> {
  let config;
  try {
    config = parseFlags(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.failure;
    return reportError(err);
  }
  let proxy;
  try {
    proxy = await startProxy(config);
  } catch (err) {
    return reportError(err);
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  await proxy.close();
  return EXIT.ok;
}

process.exitCode = await main(process.argv.slice(2));
