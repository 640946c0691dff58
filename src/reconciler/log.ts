// JSON logs of the reconciler: one object per line with time, level and message; secrets never passed in.
import type { Writable } from "node:stream";

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(out: Writable = process.stderr, min: Level = "info", now: () => Date = () => new Date()): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[level] < ORDER[min]) return;
    out.write(`${JSON.stringify({ time: now().toISOString(), level, msg, ...fields })}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
