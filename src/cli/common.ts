// What every `vc` command shares: exit codes, user errors, data output (-o json|yaml), error reporting.
import { EXIT, reportError, UserError } from "../model/errors.js";
import { dataYaml } from "../model/data-yaml.js";
import { escapeControls, jsonEscapeControls } from "../model/escape.js";

export { EXIT, UnknownClusterError, UserError } from "../model/errors.js";
export { parseDuration } from "../model/duration.js";

export type DataFormat = "json" | "yaml";

/**
 * Serialises data for stdout: JSON with two-space indent, or YAML with sorted keys (dataYaml). JSON.stringify escapes
 * C0 controls itself; the C1 controls, bidi and line-separator characters it leaves raw are written as \u escapes (the
 * same data, nothing a terminal obeys).
 */
export function formatData(data: unknown, format: DataFormat): string {
  if (format === "json") return `${jsonEscapeControls(JSON.stringify(data, null, 2))}\n`;
  return dataYaml(data);
}

/** Validates an `-o` value against the formats a command accepts. */
export function parseOutputFormat<T extends string>(value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UserError(`unknown output format "${value}": use one of ${allowed.join(", ")}`, EXIT.failure);
}

/** Runs a command action and turns any error into a message and an exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | undefined> | number | undefined) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await fn(...args);
      process.exitCode = typeof code === "number" ? code : EXIT.ok;
    } catch (err) {
      process.exitCode = reportError(err);
    }
  };
}

let pipeGuarded = false;

/** `vc render | head` closes stdout early: stop quietly with the exit code so far instead of dying on EPIPE. */
export function exitQuietlyOnClosedStdout(): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT.ok);
  });
}

/**
 * Rows as aligned columns, three spaces apart like kubectl's tables; the last column is not padded. Cells are text
 * from hosts and repositories: control characters are shown escaped (model/escape.ts), so that no cell can start a
 * row of its own or colour the terminal.
 */
export function formatColumns(table: readonly (readonly string[])[]): string {
  if (table.length === 0) return "";
  const rows = table.map((r) => r.map((c) => escapeControls(c ?? "")));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return `${rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join("   ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}
