// A fast loader for the plain block-YAML subset manifests are written in; returns undefined (so js-yaml decides) for anything else.
//
// Accepted: block mappings and sequences (including `key:` followed by a `- item` list at the same
// indentation and `- key: value` compact items), simple plain keys, single-line plain, single-quoted and
// escape-free double-quoted scalars, comments, and `---` document separators. Everything else — flow
// collections, anchors, aliases, tags, block or multi-line scalars, tabs, CR and other control or special
// characters, directives, duplicate keys,
// non-string keys, deep nesting — makes it give up, and the caller parses the file with js-yaml. Scalars
// resolve through js-yaml's own core-schema tags, so accepted input gives exactly what js-yaml gives
// (checked by differential tests).
import { boolCoreTag, floatCoreTag, intCoreTag, NOT_RESOLVED, nullCoreTag, type ScalarTagDefinition } from "js-yaml";

const IMPLICIT: readonly ScalarTagDefinition<unknown>[] = [nullCoreTag, boolCoreTag, intCoreTag, floatCoreTag];
const MAX_DEPTH = 48;
/** Characters that may not start a plain scalar or key in this subset. */
const INDICATOR = new Set(["-", "?", ":", ",", "[", "]", "{", "}", "#", "&", "*", "!", "|", ">", "'", '"', "%", "@", "`"]);
const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

class GiveUp extends Error {}
const giveUp = (): never => {
  throw new GiveUp();
};

interface Line {
  indent: number;
  /** The line after its indentation, without a trailing comment-only remainder. */
  text: string;
}

/** The implicit tags that may match a scalar starting with a character (js-yaml's own first-character dispatch). */
const BY_FIRST_CHAR = new Map<string, ScalarTagDefinition<unknown>[]>();
const ANY_FIRST_CHAR = IMPLICIT.filter((t) => t.implicitFirstChars === null);
for (const tag of IMPLICIT) {
  for (const c of tag.implicitFirstChars ?? []) BY_FIRST_CHAR.set(c, [...(BY_FIRST_CHAR.get(c) ?? ANY_FIRST_CHAR), tag]);
}

/** The core-schema value of a plain scalar, as js-yaml resolves it. */
export function resolvePlain(source: string): unknown {
  const tags = BY_FIRST_CHAR.get(source.charAt(0)) ?? ANY_FIRST_CHAR;
  for (const tag of tags) {
    const v = tag.resolve(source, false, tag.tagName);
    if (v !== NOT_RESOLVED) return v;
  }
  return source;
}

/** The documents of `text` when it is in the subset, else undefined. */
/** Tabs, CR, other control characters, BOMs and Unicode line separators: js-yaml's rules for these decide. */
const SPECIAL_CHARS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;

export function fastLoadAll(text: string): unknown[] | undefined {
  if (SPECIAL_CHARS.test(text)) return undefined;
  try {
    const docs: unknown[] = [];
    let lines: Line[] = [];
    let started = false;
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const raw = text.slice(start, end);
      start = end + 1;
      if (raw.startsWith("---")) {
        if (raw.length > 3 && !/^--- +(#.*)?$/.test(raw)) giveUp(); // "---#" or "--- x" is not a bare marker
        if (started || lines.length > 0) docs.push(parseDocument(lines));
        lines = [];
        started = true;
        continue;
      }
      if (raw.startsWith("...") || raw.startsWith("%")) giveUp();
      let indent = 0;
      while (raw.charCodeAt(indent) === 32) indent++;
      if (indent === raw.length || raw.charCodeAt(indent) === 35 /* # */) continue;
      let last = raw.length;
      while (raw.charCodeAt(last - 1) === 32) last--;
      lines.push({ indent, text: indent === 0 && last === raw.length ? raw : raw.slice(indent, last) });
    }
    if (started || lines.length > 0) docs.push(parseDocument(lines));
    return docs;
  } catch (err) {
    if (err instanceof GiveUp) return undefined;
    throw err;
  }
}

function parseDocument(lines: Line[]): unknown {
  if (lines.length === 0) return null;
  const p = new Parser(lines);
  const first = lines[0]!;
  if (!isSeqItem(first.text) && keyOf(first.text) === undefined) giveUp(); // a root scalar
  const value = p.block(first.indent, 0);
  if (p.i < lines.length) giveUp();
  return value;
}

function isSeqItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

/** `key` and the rest after `key:` of a mapping line, or undefined when the line is not `key: ...`. */
function keyOf(text: string): { key: string; rest: string } | undefined {
  let key: string;
  let after: number;
  const q = text.charAt(0);
  if (q === "'" || q === '"') {
    const close = text.indexOf(q, 1);
    if (close < 0) return undefined;
    key = text.slice(1, close);
    if (key.includes("\\") || key.includes("'") || text.charAt(close + 1) !== ":") return undefined;
    after = close + 2;
  } else {
    const colon = text.indexOf(":");
    if (colon <= 0) return undefined;
    key = text.slice(0, colon);
    if (!plainKeyOk(key)) return undefined;
    after = colon + 1;
  }
  if (after < text.length && text.charCodeAt(after) !== 32) return undefined;
  if (key === "__proto__") return undefined;
  return { key, rest: trimSpaces(text.slice(after)) };
}

/** A simple plain key that stays a string (only keys starting like a null, bool or number need resolving). */
function plainKeyOk(key: string): boolean {
  return PLAIN_KEY.test(key) && (!BY_FIRST_CHAR.has(key.charAt(0)) || typeof resolvePlain(key) === "string");
}

class Parser {
  i = 0;
  constructor(private readonly lines: Line[]) {}

  /** The node starting at the current line, which has indentation `indent`. */
  block(indent: number, depth: number): unknown {
    if (depth > MAX_DEPTH) giveUp();
    const line = this.lines[this.i]!;
    return isSeqItem(line.text) ? this.sequence(indent, depth) : this.mapping(indent, depth);
  }

  mapping(indent: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent < indent) break;
      if (line.indent > indent || isSeqItem(line.text)) giveUp();
      const kv = keyOf(line.text);
      if (!kv) giveUp();
      const { key, rest } = kv!;
      if (Object.hasOwn(out, key)) giveUp(); // js-yaml reports the duplicate
      this.i++;
      out[key] = rest === "" || rest.startsWith("#") ? this.nested(indent, depth, true) : this.inline(rest, indent);
    }
    return out;
  }

  sequence(indent: number, depth: number): unknown[] {
    const out: unknown[] = [];
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent < indent) break;
      if (line.indent > indent || !isSeqItem(line.text)) {
        if (line.indent === indent) break; // `key:` after a list that was the value of the previous key
        giveUp();
      }
      let offset = 1;
      while (line.text.charCodeAt(offset) === 32) offset++;
      const item = line.text.slice(offset);
      if (item === "" || item.startsWith("#")) {
        this.i++;
        out.push(this.nested(indent, depth, false));
      } else if (isSeqItem(item) || keyOf(item) !== undefined) {
        // A compact nested node: continue it as if it started on its own line at its own column.
        this.lines[this.i] = { indent: indent + offset, text: item };
        out.push(this.block(indent + offset, depth + 1));
      } else {
        this.i++;
        out.push(this.inline(item, indent));
      }
    }
    return out;
  }

  /** The value of `key:` or `-` with nothing after it: a deeper block, a same-level list (mappings only), or null. */
  nested(indent: number, depth: number, inMapping: boolean): unknown {
    const next = this.lines[this.i];
    if (next && next.indent > indent) return this.block(next.indent, depth + 1);
    if (inMapping && next && next.indent === indent && isSeqItem(next.text)) return this.sequence(indent, depth + 1);
    return null;
  }

  /** A scalar on the same line as its key or dash; the next line may not continue it. */
  inline(text: string, indent: number): unknown {
    const next = this.lines[this.i];
    if (next && next.indent > indent) giveUp(); // a multi-line scalar or a misplaced block
    return scalar(text);
  }
}

function scalar(text: string): unknown {
  const c = text.charAt(0);
  if (c === "'" || c === '"') {
    let end = -1;
    let value = "";
    if (c === "'") {
      let from = 1;
      for (;;) {
        const close = text.indexOf("'", from);
        if (close < 0) giveUp();
        if (text.charAt(close + 1) === "'") {
          value += text.slice(from, close + 1);
          from = close + 2;
          continue;
        }
        value += text.slice(from, close);
        end = close + 1;
        break;
      }
    } else {
      const close = text.indexOf('"', 1);
      if (close < 0) giveUp();
      value = text.slice(1, close);
      if (value.includes("\\")) giveUp();
      end = close + 1;
    }
    const rest = text.slice(end);
    if (rest !== "" && !/^ +#/.test(rest)) giveUp();
    return value;
  }
  // "-", "?" and ":" start a plain scalar when a non-space follows ("-1", "-x"); the other indicators never do.
  if (INDICATOR.has(c) && !((c === "-" || c === "?" || c === ":") && text.length > 1 && text.charAt(1) !== " ")) giveUp();
  const hash = text.indexOf(" #");
  const plain = trimSpaces(hash >= 0 ? text.slice(0, hash) : text);
  if (plain.includes(": ") || plain.endsWith(":") || plain.includes(" #")) giveUp();
  return resolvePlain(plain);
}

/** Strips ASCII spaces only: YAML keeps other Unicode spaces (no-break space, ...) as content, unlike String.trim. */
function trimSpaces(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) === 32) a++;
  while (b > a && s.charCodeAt(b - 1) === 32) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}
