// The rule for tests that need a program this machine may lack: skipped with what to install outside CI, failed in CI.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { createServer, type AddressInfo } from "node:net";

/** The full path of an executable on PATH (or the absolute path given), or undefined. */
export function findExecutable(name: string): string | undefined {
  const candidates = name.includes("/")
    ? [name]
    : (process.env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * In a mocha `before` hook: when `missing` names something, skip the suite with a line saying how to get it,
 * unless CI is set, where a missing tool is a failure (CI must run every tier).
 */
export function requireOrSkip(ctx: Mocha.Context, missing: string | undefined, howToGet: string): void {
  if (missing === undefined) return;
  const line = `${missing} not found: ${howToGet}`;
  if (process.env.CI) throw new Error(`${line} (CI is set: every test tier must run)`);
  process.stdout.write(`      skipped: ${line}\n`);
  ctx.skip();
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
