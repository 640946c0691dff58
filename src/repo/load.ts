// Reads and parses one repository YAML file: the safe read, then the fast parse; any failure is a located diagnostic.
import type { Diagnostic } from "../model/diagnostic.js";
import { readRepoFile } from "./read.js";
import { parseYaml } from "./yaml.js";

export type LoadedFile = { ok: true; file: string; text: string; docs: unknown[] } | { ok: false; diagnostic: Diagnostic };

export function loadYamlFile(realRoot: string, file: string): LoadedFile {
  const read = readRepoFile(realRoot, file);
  if (!read.ok) return { ok: false, diagnostic: { file, line: 0, col: 0, severity: "error", code: read.code, message: read.message } };
  const parsed = parseYaml(read.text);
  if (!parsed.ok) {
    const e = parsed.error;
    return { ok: false, diagnostic: { file, line: e.line, col: e.col, severity: "error", code: e.code, message: e.message } };
  }
  return { ok: true, file, text: read.text, docs: parsed.docs };
}
