// Parses YAML text into documents with js-yaml's plain loader, within limits: aliases, alias expansion per file,
// nesting, reserved keys.
import {
  constructFromEvents,
  EVENT_ID,
  getScalarValue,
  load,
  MAX_DEPTH,
  PARSE_MAX_DEPTH,
  parseEvents,
  SCALAR_STYLE,
  YAMLException,
  type Event,
} from "./js-yaml.js";
import { YamlPositions, type PathSegment } from "./positions.js";

/** Aliases allowed per document; manifests rarely need any. */
export const MAX_ALIASES = 100;
/**
 * Nodes that aliases may add to one file once expanded (every repeat of an aliased collection counts its
 * whole subtree). Bounds "billion laughs" files, including many small bombs in one file. Nodes written out
 * in full never count: a large alias-free file is not an alias bomb.
 */
export const MAX_FILE_ALIAS_NODES = 100_000;
/** The same budget for all files of one cluster folder together (checked by the validator). */
export const MAX_CLUSTER_ALIAS_NODES = 250_000;
/**
 * Bytes that aliases may add to one file once expanded: an alias of a scalar repeats its text, an alias of a collection
 * its keys and scalars (what a copy, a render or a serialisation of the documents holds). A count of nodes alone let
 * one long anchored string, repeated by thousands of aliases, expand a 2 MiB folder to over 100 MiB downstream.
 */
export const MAX_FILE_ALIAS_BYTES = 1024 * 1024;
/** The same budget for all files of one cluster folder together (checked by the validator). */
export const MAX_CLUSTER_ALIAS_BYTES = 1024 * 1024;
/** Deepest nesting of collections once aliases are expanded (an alias adds the depth of the collection it names). */
export const MAX_EXPANDED_DEPTH = MAX_DEPTH * 4;
/** Keys that would reach an object's prototype machinery once the data is merged or copied: refused everywhere. */
const RESERVED_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

export interface YamlError {
  code: "yaml-syntax" | "yaml-duplicate-key" | "yaml-alias-bomb" | "yaml-alias-cycle" | "yaml-reserved-key";
  message: string;
  /** 1-based; 0 when unknown. */
  line: number;
  col: number;
}

export type ParseResult =
  | {
      ok: true;
      docs: unknown[];
      /** Nodes aliases add once expanded (0 without aliases). */
      aliasNodes: number;
      /** Bytes of keys and scalars aliases add once expanded (0 without aliases). */
      aliasBytes: number;
      /**
       * The parser's events (what js-yaml's loadAll constructs the documents from): positions of findings come from
       * them.
       */
      events: Event[];
    }
  | { ok: false; error: YamlError };

/** All documents of a YAML stream (empty documents as null), or the first error with its position. */
export function parseYaml(text: string): ParseResult {
  let docs: unknown[];
  let events: Event[];
  try {
    // Exactly js-yaml's loadAll (parse to events, construct from them), keeping the events for positions.
    events = parseEvents(text, { maxDepth: PARSE_MAX_DEPTH });
    docs = constructFromEvents(events, { source: text, maxAliases: MAX_ALIASES });
  } catch (err) {
    return { ok: false, error: toYamlError(err, text) };
  }
  // One pass over the events finds nesting past MAX_DEPTH, reserved keys written out and whether there is any alias at
  // all.
  const scan = scanEvents(text, events);
  if (scan.tooDeep !== undefined) {
    const { line, col } = new YamlPositions(text, events).position(scan.tooDeep);
    return { ok: false, error: { code: "yaml-syntax", message: depthMessage(), line, col } };
  }
  if (scan.reservedKey) {
    const { line, col } = new YamlPositions(text, events).position(scan.reservedKey.offset);
    return { ok: false, error: reservedError(scan.reservedKey.key, line, col) };
  }
  // Only aliases can expand or loop: a file without any skips the walk over its documents.
  if (!scan.alias) return { ok: true, docs, aliasNodes: 0, aliasBytes: 0, events };
  // An alias may also stand for a key (its anchor's text possibly escaped): the walk checks every key.
  const walk = new Walk(scan.scalarAliases, scan.scalarAliasBytes);
  if (walk.aliasBytes > MAX_FILE_ALIAS_BYTES) return { ok: false, error: locate({ kind: "bytes" }, 0, text, events) };
  for (let d = 0; d < docs.length; d++) {
    const problem = walk.doc(docs[d]);
    if (problem) return { ok: false, error: locate(problem, d, text, events) };
  }
  return { ok: true, docs, aliasNodes: walk.aliasNodes, aliasBytes: walk.aliasBytes, events };
}

const depthMessage = (): string => `YAML nests collections deeper than ${MAX_DEPTH} levels: refused`;

/** What one pass over the events finds (scanEvents). */
interface Scan {
  alias: boolean;
  /** Aliases of scalars, and the bytes of the scalars they repeat (a scalar's text as written, an upper bound). */
  scalarAliases: number;
  scalarAliasBytes: number;
  reservedKey?: { key: string; offset: number };
  tooDeep?: number;
}

/**
 * Whether the events hold an alias (and what aliases of scalars repeat), the first mapping key (written out, not
 * aliased) that is a reserved word, and the offset of the first collection nested deeper than MAX_DEPTH.
 */
function scanEvents(text: string, events: readonly Event[]): Scan {
  let alias = false;
  let scalarAliases = 0;
  let scalarAliasBytes = 0;
  // Anchors of scalars by name, with the length of their text; an anchor of a collection maps to undefined.
  const anchors = new Map<string, number | undefined>();
  const anchorOf = (ev: { anchorStart?: number; anchorEnd?: number }): string | undefined =>
    ev.anchorStart !== undefined && ev.anchorStart >= 0 ? text.slice(ev.anchorStart, ev.anchorEnd) : undefined;
  const stop = (more: Partial<Scan>): Scan => ({ alias, scalarAliases, scalarAliasBytes, ...more });
  // Per open collection: whether it is a mapping and how many nodes it has seen (keys are the even ones).
  const mapping: boolean[] = [];
  const seen: number[] = [];
  for (const ev of events) {
    const top = mapping.length - 1;
    const isKey = top >= 0 && mapping[top]! && seen[top]! % 2 === 0;
    if (ev.type !== EVENT_ID.POP && ev.type !== EVENT_ID.DOCUMENT && top >= 0) seen[top]!++;
    switch (ev.type) {
      case EVENT_ID.DOCUMENT:
      case EVENT_ID.SEQUENCE:
      case EVENT_ID.MAPPING:
        mapping.push(ev.type === EVENT_ID.MAPPING);
        seen.push(0);
        if (ev.type !== EVENT_ID.DOCUMENT) {
          const name = anchorOf(ev);
          if (name !== undefined) anchors.set(name, undefined);
        }
        // The stack holds the document and its open collections.
        if (mapping.length - 1 > MAX_DEPTH) return stop({ tooDeep: (ev as { start: number }).start });
        break;
      case EVENT_ID.POP:
        mapping.pop();
        seen.pop();
        break;
      case EVENT_ID.ALIAS: {
        alias = true;
        const bytes = anchors.get(anchorOf(ev) ?? "");
        if (bytes !== undefined) {
          scalarAliases++;
          scalarAliasBytes += bytes;
        }
        break;
      }
      case EVENT_ID.SCALAR: {
        const name = anchorOf(ev);
        if (name !== undefined) anchors.set(name, Math.max(1, ev.valueEnd - ev.valueStart));
        if (!isKey) break;
        const length = ev.valueEnd - ev.valueStart;
        // Plain keys are their own text: only the lengths of the reserved words need a look. Quoted ones may hold
        // escapes.
        if (ev.style === SCALAR_STYLE.PLAIN && length !== 9 && length !== 11) break;
        const key = getScalarValue(text, ev);
        if (RESERVED_KEYS.includes(key)) {
          const quoted = ev.style === SCALAR_STYLE.SINGLE_QUOTED || ev.style === SCALAR_STYLE.DOUBLE_QUOTED;
          return stop({ reservedKey: { key, offset: quoted ? ev.valueStart - 1 : ev.valueStart } });
        }
        break;
      }
    }
  }
  return stop({});
}

function reservedError(key: string, line: number, col: number): YamlError {
  return {
    code: "yaml-reserved-key",
    message:
      `key "${key}" is not allowed (it names JavaScript object machinery and could change how the data ` +
      `behaves): rename or remove it`,
    line,
    col,
  };
}

type Problem =
  | { kind: "budget" | "depth" | "bytes" }
  | { kind: "cycle" }
  | { kind: "reserved"; path: PathSegment[]; key: string };

/**
 * One pass over a file's documents: counts the nodes that repeats of shared (aliased) collections add, finds
 * collections that contain themselves and reserved keys. Each shared collection is walked once.
 */
class Walk {
  aliasNodes: number;
  /** Bytes of keys and scalars that repeats add (aliases of scalars counted by scanEvents to begin with). */
  aliasBytes: number;
  private readonly sizes = new Map<object, number>();
  /** Bytes of keys and scalars in each shared collection, once expanded. */
  private readonly bytes = new Map<object, number>();
  /** Bytes of the value `size` last returned for. */
  private lastBytes = 0;

  constructor(scalarAliases: number, scalarAliasBytes: number) {
    this.aliasNodes = scalarAliases;
    this.aliasBytes = scalarAliasBytes;
  }
  /** Levels of collections in each shared collection, itself included (its height once expanded). */
  private readonly heights = new Map<object, number>();
  /** Height of the value `size` last returned for (0 for a scalar). */
  private height = 0;
  private readonly open = new Set<object>();
  private readonly path: PathSegment[] = [];

  doc(value: unknown): Problem | undefined {
    try {
      this.size(value, 0);
      return undefined;
    } catch (err) {
      if (err instanceof Stop) return err.problem;
      throw err;
    }
  }

  /**
   * Nodes of `value` once expanded, `depth` collections below the document; sets `height`. Throws Stop on the
   * first problem: a repeat of a shared collection counts its whole subtree, nodes and levels.
   */
  private size(value: unknown, depth: number): number {
    this.height = 0;
    if (value === null || typeof value !== "object") {
      this.lastBytes = typeof value === "string" ? value.length : 8;
      return 1;
    }
    if (this.open.has(value)) throw new Stop({ kind: "cycle" });
    const known = this.sizes.get(value);
    if (known !== undefined) {
      this.aliasNodes += known;
      this.lastBytes = this.bytes.get(value)!;
      this.aliasBytes += this.lastBytes;
      if (this.aliasNodes > MAX_FILE_ALIAS_NODES) throw new Stop({ kind: "budget" });
      if (this.aliasBytes > MAX_FILE_ALIAS_BYTES) throw new Stop({ kind: "bytes" });
      this.height = this.heights.get(value)!;
      if (depth + this.height > MAX_EXPANDED_DEPTH) throw new Stop({ kind: "depth" });
      return known;
    }
    if (depth + 1 > MAX_EXPANDED_DEPTH) throw new Stop({ kind: "depth" });
    this.open.add(value);
    let size = 1;
    let bytes = 0;
    let below = 0;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        this.path.push(i);
        size += this.size(value[i], depth + 1);
        bytes += this.lastBytes;
        below = Math.max(below, this.height);
        this.path.pop();
      }
    } else {
      for (const key of Object.keys(value)) {
        this.path.push(key);
        if (RESERVED_KEYS.includes(key)) throw new Stop({ kind: "reserved", path: [...this.path], key });
        size += this.size((value as Record<string, unknown>)[key], depth + 1);
        bytes += key.length + this.lastBytes;
        below = Math.max(below, this.height);
        this.path.pop();
      }
    }
    this.open.delete(value);
    this.sizes.set(value, size);
    this.bytes.set(value, bytes);
    this.heights.set(value, below + 1);
    this.height = below + 1;
    this.lastBytes = bytes;
    return size;
  }
}

class Stop extends Error {
  constructor(readonly problem: Problem) {
    super(problem.kind);
  }
}

/** The error of a problem in document `doc`, located by parsing the text again with events (errors only). */
function locate(problem: Problem, doc: number, text: string, events: Event[]): YamlError {
  const positions = new YamlPositions(text, events);
  switch (problem.kind) {
    case "reserved": {
      const at = positions.locate(doc, problem.path, "key");
      return reservedError(problem.key, at.line, at.col);
    }
    case "cycle": {
      const at = selfAlias(text, events, doc) ?? positions.locate(doc, [], "value");
      return {
        code: "yaml-alias-cycle",
        message: "a YAML alias refers to the collection that contains it (a self-referencing alias): refused",
        line: at.line,
        col: at.col,
      };
    }
    case "depth": {
      const at = positions.locate(doc, [], "value");
      return {
        code: "yaml-alias-bomb",
        message: `YAML aliases nest collections deeper than ${MAX_EXPANDED_DEPTH} levels once expanded: refused`,
        ...at,
      };
    }
    case "bytes": {
      const at = positions.locate(doc, [], "value");
      return {
        code: "yaml-alias-bomb",
        message:
          `YAML aliases in this file expand to more than ${MAX_FILE_ALIAS_BYTES} extra bytes once repeated, ` +
          `past the budget in document ${doc + 1}: refused (an alias bomb?)`,
        ...at,
      };
    }
    default: {
      const at = positions.locate(doc, [], "value");
      return {
        code: "yaml-alias-bomb",
        message:
          `YAML aliases in this file expand to more than ${MAX_FILE_ALIAS_NODES} extra nodes, past the ` +
          `budget in document ${doc + 1}: refused (an alias bomb?)`,
        ...at,
      };
    }
  }
}

/** Position of the first alias in document `doc` that names an anchor of a collection still open around it. */
function selfAlias(text: string, events: Event[], doc: number): { line: number; col: number } | undefined {
  let d = -1;
  const open: string[] = [];
  for (const ev of events) {
    if (ev.type === EVENT_ID.DOCUMENT) d++;
    if (d !== doc) continue;
    if (ev.type === EVENT_ID.MAPPING || ev.type === EVENT_ID.SEQUENCE) {
      open.push(ev.anchorStart >= 0 ? text.slice(ev.anchorStart, ev.anchorEnd) : "");
    } else if (ev.type === EVENT_ID.POP) {
      open.pop();
    } else if (ev.type === EVENT_ID.ALIAS && open.includes(text.slice(ev.anchorStart, ev.anchorEnd))) {
      return new YamlPositions(text).position(ev.anchorStart - 1);
    }
  }
  return undefined;
}

function toYamlError(err: unknown, text: string): YamlError {
  if (err instanceof YAMLException) {
    const line = err.mark ? err.mark.line + 1 : 0;
    const col = err.mark ? err.mark.column + 1 : 0;
    if (err.reason.startsWith("duplicated mapping key")) {
      // js-yaml marks a quoted key just after its opening quote: the key (and its column) starts at the quote.
      const position = err.mark?.position ?? -1;
      const quoted = position > 0 && (text[position - 1] === '"' || text[position - 1] === "'");
      const key = position >= 0 ? keyAt(text, quoted ? position - 1 : position) : "";
      return {
        code: "yaml-duplicate-key",
        message: `duplicate key${key ? ` ${JSON.stringify(key)}` : ""} in a mapping: keep one`,
        line,
        col: quoted ? col - 1 : col,
      };
    }
    if (err.reason.startsWith("nesting exceeded maxDepth")) {
      return { code: "yaml-syntax", message: depthMessage(), line, col };
    }
    if (err.reason.includes("maxAliases")) {
      return {
        code: "yaml-alias-bomb",
        message: `more than ${MAX_ALIASES} YAML aliases in one document: refused`,
        line,
        col,
      };
    }
    return { code: "yaml-syntax", message: `YAML syntax error: ${err.reason}`, line, col };
  }
  // js-yaml's own limits (nesting depth) and anything unexpected: still a located, readable error.
  return {
    code: "yaml-syntax",
    message: `YAML error: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    line: 0,
    col: 0,
  };
}

/** The key starting at `position` (a quoted key at its quote, read with its escapes), for naming a duplicate key. */
function keyAt(text: string, position: number): string {
  const rest = text.slice(position, position + 1024);
  const quoted = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')/s.exec(rest);
  if (quoted) {
    try {
      const value = load(quoted[0]);
      return typeof value === "string" ? value : "";
    } catch {
      return "";
    }
  }
  const m = /^\s*([^:\r\n#]+?)\s*:/.exec(rest);
  return m ? m[1]!.trim() : "";
}
