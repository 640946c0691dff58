// How wide help text may be: a terminal's own width; in a file or a pipe no wrapping at all (commander's default is
// 80).
import type { Command } from "commander";

/** The wrap width for a stream: its columns on a terminal, else $COLUMNS when set, else unlimited. */
export function helpWidth(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns > 0) return columns;
  return Number.MAX_SAFE_INTEGER;
}

/** Sets the help width rule on a program; the commands it creates afterwards inherit it. */
export function wrapHelpToTerminal<T extends Command>(program: T): T {
  program.configureOutput({
    getOutHelpWidth: () => helpWidth(process.stdout),
    getErrHelpWidth: () => helpWidth(process.stderr),
  });
  return program;
}
