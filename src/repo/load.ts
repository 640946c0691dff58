// Reads and parses one YAML file (the safe read, then js-yaml within the limits of yaml.ts); any failure is a located
// diagnostic.
import type { Event } from "js-yaml";
import type { Diagnostic } from "../model/diagnostic.js";
import { readRepoFile } from "./read.js";
import { parseYaml } from "./yaml.js";

export type LoadedFile =
  | {
      ok: true;
      file: string;
      text: string;
      docs: unknown[];
      /** Nodes aliases add once expanded. */
      aliasNodes: number;
      /** Bytes of keys and scalars aliases add once expanded. */
      aliasBytes: number;
      /** The parser's events, for positions. */
      events: Event[];
    }
  | { ok: false; diagnostic: Diagnostic };

/**
 * A repository file (`/`-separated `file` under the real path `realRoot`): size, symlink and encoding checks, then the
 * parse.
 */
export function loadYamlFile(realRoot: string, file: string): LoadedFile {
  const read = readRepoFile(realRoot, file);
  if (!read.ok)
    return {
      ok: false,
      diagnostic: { file, line: 0, col: 0, severity: "error", code: read.code, message: read.message },
    };
  return loadYamlText(file, read.text);
}

/**
 * YAML text already read (from a repository, a hydrated manifests folder, a request), named `file` in its
 * diagnostic: the same limits as every repository file (aliases, expansion, nesting, reserved keys).
 */
export function loadYamlText(file: string, text: string): LoadedFile {
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const e = parsed.error;
    return {
      ok: false,
      diagnostic: { file, line: e.line, col: e.col, severity: "error", code: e.code, message: e.message },
    };
  }
  const { docs, aliasNodes, aliasBytes, events } = parsed;
  return { ok: true, file, text, docs, aliasNodes, aliasBytes, events };
}
