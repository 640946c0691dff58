// Parses YAML text into documents without positions (fast loader, else js-yaml), bounded against alias bombs and deep nesting.
import { loadAll, YAMLException } from "js-yaml";
import { fastLoadAll } from "./fast-yaml.js";

/** Aliases allowed per document; manifests rarely need any. */
export const MAX_ALIASES = 100;
/** Nodes a document may expand to once aliases are resolved (bounds "billion laughs" documents). */
export const MAX_EXPANDED_NODES = 100_000;
/** Deepest nesting of collections. */
export const MAX_DEPTH = 64;

export interface YamlError {
  code: "yaml-syntax" | "yaml-duplicate-key" | "yaml-alias-bomb";
  message: string;
  /** 1-based; 0 when unknown. */
  line: number;
  col: number;
}

export type ParseResult = { ok: true; docs: unknown[] } | { ok: false; error: YamlError };

/** All documents of a YAML stream (empty documents as null), or the first error with its position. */
export function parseYaml(text: string): ParseResult {
  // The common plain block style takes the fast loader; anything it does not handle goes to js-yaml.
  let docs: unknown[] | undefined = fastLoadAll(text);
  if (docs === undefined) {
    try {
      docs = loadAll(text, { maxAliases: MAX_ALIASES, maxDepth: MAX_DEPTH });
    } catch (err) {
      return { ok: false, error: toYamlError(err, text) };
    }
  }
  // Only a text with an anchor can hold an alias: every other file skips the expansion count.
  if (text.includes("&")) {
    for (const doc of docs) {
      if (expandedSize(doc, new Map(), MAX_EXPANDED_NODES + 1) > MAX_EXPANDED_NODES) {
        return {
          ok: false,
          error: {
            code: "yaml-alias-bomb",
            message: `YAML aliases expand to more than ${MAX_EXPANDED_NODES} nodes: refused (an alias bomb?)`,
            line: 0,
            col: 0,
          },
        };
      }
    }
  }
  return { ok: true, docs };
}

/** Nodes of a value with shared (aliased) parts counted every time they appear; stops counting past `limit`. */
function expandedSize(value: unknown, memo: Map<object, number>, limit: number): number {
  if (value === null || typeof value !== "object") return 1;
  const known = memo.get(value);
  if (known !== undefined) return known;
  let size = 1;
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) {
    size += expandedSize(child, memo, limit);
    if (size > limit) break;
  }
  memo.set(value, size);
  return size;
}

function toYamlError(err: unknown, text: string): YamlError {
  if (err instanceof YAMLException) {
    const line = err.mark ? err.mark.line + 1 : 0;
    const col = err.mark ? err.mark.column + 1 : 0;
    if (err.reason.startsWith("duplicated mapping key")) {
      const key = err.mark ? keyAt(text, err.mark.position) : "";
      return { code: "yaml-duplicate-key", message: `duplicate key${key ? ` "${key}"` : ""} in a mapping: keep one`, line, col };
    }
    if (err.reason.includes("maxAliases")) {
      return { code: "yaml-alias-bomb", message: `more than ${MAX_ALIASES} YAML aliases in one document: refused`, line, col };
    }
    return { code: "yaml-syntax", message: `YAML syntax error: ${err.reason}`, line, col };
  }
  // js-yaml's own limits (nesting depth) and anything unexpected: still a located, readable error.
  return { code: "yaml-syntax", message: `YAML error: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`, line: 0, col: 0 };
}

/** The key text starting at `position` (up to the colon), for naming a duplicate key. */
function keyAt(text: string, position: number): string {
  const rest = text.slice(position, position + 200);
  const m = /^\s*(?:"([^"]*)"|'([^']*)'|([^:\n#]+?))\s*:/.exec(rest);
  return m ? (m[1] ?? m[2] ?? m[3] ?? "").trim() : "";
}
