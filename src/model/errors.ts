// What every layer shares about failing: exit codes, errors meant for the user, and printing an error once.
import { escapeLines } from "./escape.js";

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

/**
 * Prints an error for the user and returns its exit code. Stack traces only with VC_DEBUG=1. A message may carry
 * text from a host (a server's message, a name): its control characters are shown escaped (model/escape.ts).
 */
export function reportError(err: unknown): number {
  if (err instanceof UserError) {
    process.stderr.write(`error: ${escapeLines(err.message)}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${escapeLines(message)}\n`);
  if (process.env.VC_DEBUG === "1" && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.failure;
}

/**
 * A cluster named on the command line (`--cluster NAME`, `<name>`) that names nothing vc can find: no folder in the
 * repository and nothing of it where the command looked. Every command reports it the same way: exit 1, and
 * `unknown cluster "NAME": <what was looked at, joined by "and">; cluster folders: <the repository's, when read>`.
 */
export class UnknownClusterError extends UserError {
  constructor(
    readonly names: readonly string[],
    lookedAt: (name: string) => readonly string[],
    known?: readonly string[],
  ) {
    super(
      `${names.map((n) => `unknown cluster "${n}": ${lookedAt(n).join(" and ")}`).join("; ")}${knownList(known)}`,
      EXIT.invalid,
    );
  }
}

/** `; cluster folders: a, b, c` (at most 10 named), `; there are no cluster folders`, or nothing when not read. */
function knownList(known: readonly string[] | undefined): string {
  if (known === undefined) return "";
  if (known.length === 0) return "; there are no cluster folders";
  const shown = known.slice(0, 10).join(", ");
  return `; cluster folders: ${shown}${known.length > 10 ? `, and ${known.length - 10} more` : ""}`;
}
