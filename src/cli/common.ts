// What every `vc` command shares: exit codes, user errors, data output (-o json|yaml), error reporting.
import { dump } from "js-yaml";
import { EXIT, reportError, UserError } from "../errors.js";

export { EXIT, reportError, UnknownClusterError, UserError } from "../errors.js";
export { parseDuration } from "../duration.js";

export type DataFormat = "json" | "yaml";

/** Serialises data for stdout: JSON with two-space indent, or YAML with sorted keys. */
export function formatData(data: unknown, format: DataFormat): string {
  if (format === "json") return `${JSON.stringify(data, null, 2)}\n`;
  return dump(data, { sortKeys: true, noRefs: true, lineWidth: -1 });
}

/** Validates an `-o` value against the formats a command accepts. */
export function parseOutputFormat<T extends string>(value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UserError(`unknown output format "${value}": use one of ${allowed.join(", ")}`, EXIT.failure);
}

/** Runs a command action and turns any error into a message and an exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | void> | number | void) {
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

/** Rows as aligned columns, three spaces apart like kubectl's tables; the last column is not padded. */
export function formatColumns(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "";
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("   ").trimEnd()).join("\n")}\n`;
}
