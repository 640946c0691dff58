// Durations in Go's syntax, as flags, the values schema and Kubernetes write them.
import { UserError } from "./errors.js";

const DURATION_UNITS_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

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

/** kubectl's `--request-timeout`: a bare number is seconds, `0` waits without end, else a duration (`30s`, `1m`). */
export function parseRequestTimeout(text: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  try {
    return parseDuration(trimmed);
  } catch {
    throw new UserError(
      `invalid --request-timeout "${text}": use seconds (30), a duration (30s, 2m) or 0 for no limit`,
    );
  }
}
