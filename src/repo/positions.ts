// Finds the line and column of a path inside a YAML document; computed only for documents that have a diagnostic.
import { EVENT_ID, getScalarValue, PARSE_MAX_DEPTH, parseEvents, type Event } from "./js-yaml.js";

export type PathSegment = string | number;

export interface Position {
  /** 1-based. */
  line: number;
  /** 1-based. */
  col: number;
}

type YNode =
  | { kind: "map"; at: number; pairs: Map<string, { keyAt: number; value: YNode }> }
  | { kind: "seq"; at: number; items: YNode[] }
  | { kind: "scalar"; at: number }
  | { kind: "alias"; at: number };

/**
 * Positions within one file's text: parses its events on first use and builds the node tree of a document only when
 * asked about it.
 */
export class YamlPositions {
  /** Index of each document's DOCUMENT event. */
  private docStarts: number[] | undefined;
  private readonly docs = new Map<number, YNode | null>();
  private lineStarts: number[] | undefined;

  /** `events`: the parser's events of `text` when the caller has them (else they are parsed on first use). */
  constructor(
    private readonly text: string,
    private events?: Event[],
  ) {}

  /**
   * Drops the events (documents already located keep their tree); a later question about another document parses again.
   */
  release(): void {
    this.events = undefined;
    this.docStarts = undefined;
  }

  /**
   * Position of `path` in document `doc`: of the key itself when `at` is "key" (the default) and the last
   * segment is a mapping key, else of the value. A path that does not exist resolves to its deepest existing part.
   */
  locate(doc: number, path: readonly PathSegment[], at: "key" | "value" = "key"): Position {
    const root = this.tree(doc);
    if (!root) return { line: 1, col: 1 };
    let node: YNode = root;
    let offset = root.at;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      const last = i === path.length - 1;
      if (node.kind === "map") {
        const pair = node.pairs.get(String(seg));
        if (!pair) break;
        if (last && at === "key") {
          offset = pair.keyAt;
          break;
        }
        node = pair.value;
        offset = node.at >= 0 ? node.at : pair.keyAt;
      } else if (node.kind === "seq" && typeof seg === "number" && seg < node.items.length) {
        node = node.items[seg]!;
        offset = node.at >= 0 ? node.at : offset;
      } else {
        break;
      }
    }
    return this.position(offset);
  }

  /** 1-based line and column of a character offset. */
  position(offset: number): Position {
    const starts = (this.lineStarts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= Math.max(offset, 0)) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: Math.max(offset, 0) - starts[lo]! + 1 };
  }

  private tree(doc: number): YNode | null {
    const cached = this.docs.get(doc);
    if (cached !== undefined) return cached;
    if (!this.events) {
      try {
        this.events = parseEvents(this.text, { maxDepth: PARSE_MAX_DEPTH });
      } catch {
        this.events = [];
      }
    }
    const events = this.events;
    if (!this.docStarts) {
      const starts: number[] = [];
      events.forEach((ev, i) => {
        if (ev.type === EVENT_ID.DOCUMENT) starts.push(i);
      });
      this.docStarts = starts;
    }
    const first = this.docStarts[doc];
    if (first === undefined) return null;
    let i = first + 1;
    const text = this.text;
    const node = (): YNode => {
      const ev = events[i++]!;
      switch (ev.type) {
        case EVENT_ID.MAPPING: {
          const pairs = new Map<string, { keyAt: number; value: YNode }>();
          while (events[i] && events[i]!.type !== EVENT_ID.POP) {
            const kev = events[i]!;
            const key = kev.type === EVENT_ID.SCALAR ? getScalarValue(text, kev) : "";
            const k = node();
            const value = node();
            if (!pairs.has(key)) pairs.set(key, { keyAt: k.at, value });
          }
          i++;
          return { kind: "map", at: ev.start, pairs };
        }
        case EVENT_ID.SEQUENCE: {
          const items: YNode[] = [];
          while (events[i] && events[i]!.type !== EVENT_ID.POP) items.push(node());
          i++;
          return { kind: "seq", at: ev.start, items };
        }
        case EVENT_ID.SCALAR:
          // Quoted scalars start at their quote.
          return {
            kind: "scalar",
            at: ev.valueStart < 0 ? -1 : ev.style === 2 || ev.style === 3 ? ev.valueStart - 1 : ev.valueStart,
          };
        case EVENT_ID.ALIAS:
          return { kind: "alias", at: ev.anchorStart - 1 };
        default:
          return { kind: "scalar", at: -1 };
      }
    };
    const root = events[i] && events[i]!.type !== EVENT_ID.POP ? node() : null;
    this.docs.set(doc, root);
    return root;
  }
}

/**
 * Offsets where lines start: after each line break, CR LF, LF or a CR alone (YAML counts all three, as js-yaml does).
 */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const m of text.matchAll(/\r\n?|\n/g)) starts.push(m.index + m[0].length);
  return starts;
}
