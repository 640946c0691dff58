// JSON-lines logging shared by the long-running processes (reconciler, metrics proxy): one object per line.
import { maskCredentialsInText } from "./secrets.js";

type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  /** Where lines go; stderr by default. */
  out?: { write(line: string): unknown };
  /** Lowest level written; `info` by default. */
  min?: Level;
  /** Clock, for tests. */
  now?: () => Date;
}

/** A logger writing `{"time","level","msg",...fields}` lines. Callers never pass secrets in fields. */
export function jsonLogger({ out = process.stderr, min = "info", now = () => new Date() }: LoggerOptions = {}): Logger {
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[level] < ORDER[min]) return;
    // No credential reaches a log line: passwords inside URLs are masked wherever they appear.
    out.write(`${maskCredentialsInText(JSON.stringify({ time: now().toISOString(), level, msg, ...fields }))}\n`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** A logger that drops everything (tests, benchmarks, library use). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
