// What every `vc` command shares: exit codes, user errors, data output (-o json|yaml), error reporting.
import { dump } from "js-yaml";

/** 0 success / no drift, 1 invalid input or drift found, 2 usage or runtime failure. */
export const EXIT = { ok: 0, invalid: 1, failure: 2 } as const;

/** An error meant for the user: printed as its message, never as a stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}

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

/** Prints an error for the user and returns its exit code. Stack traces only with VC_DEBUG=1. */
export function reportError(err: unknown): number {
  if (err instanceof UserError) {
    process.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  if (process.env.VC_DEBUG === "1" && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.failure;
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

const DURATION_UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration in Go's syntax, as the values schema and Kubernetes write them (`30s`, `5m`, `1h`,
 * `250ms`, `1m30s`, `1.5h`, `500us`), into milliseconds.
 */
export function parseDuration(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let end = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * DURATION_UNITS_MS[m[2]!]!;
    end = re.lastIndex;
  }
  if (text === "" || end !== text.length) {
    throw new UserError(`invalid duration "${text}": use forms like 250ms, 30s, 5m, 1h, 1m30s`);
  }
  return total;
}

/** Rows as aligned columns, three spaces apart like kubectl's tables; the last column is not padded. */
export function formatColumns(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "";
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("   ").trimEnd()).join("\n")}\n`;
}
