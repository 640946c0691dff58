// What every layer shares about failing: exit codes, errors meant for the user, and printing an error once.

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
