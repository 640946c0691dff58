// Warnings the API server returns in `Warning` headers (deprecated APIs, fields it dropped, values it changed): parsed,
// told once per process, and never swallowed. The default sink writes them to stderr as kubectl does.

/** One server warning: the server that gave it, the request that drew it, and its text. */
export interface ServerWarning {
  server: string;
  method: string;
  path: string;
  text: string;
}

export type WarningSink = (w: ServerWarning) => void;

const stderrSink: WarningSink = (w) => process.stderr.write(`warning: the API server ${w.server} warned about ${w.method} ${w.path}: ${w.text}\n`);

let sink: WarningSink = stderrSink;
const told = new Set<string>();
const all: ServerWarning[] = [];

/** Routes warnings to `next` (the reconciler's log, a test); returns the previous sink. */
export function setWarningSink(next: WarningSink): WarningSink {
  const previous = sink;
  sink = next;
  return previous;
}

/** Every warning told so far in this process (in order). */
export function serverWarnings(): readonly ServerWarning[] {
  return all;
}

/** Forgets what was told (tests). */
export function resetServerWarnings(): void {
  told.clear();
  all.length = 0;
}

/**
 * The texts of `Warning` header values (RFC 7234 `299 - "text"` as the API server writes them; a value that is not in
 * that form is taken whole). Quoted texts may hold commas and escaped quotes.
 */
export function parseWarningHeaders(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    const re = /\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)/gy;
    let m: RegExpExecArray | null;
    let end = 0;
    while ((m = re.exec(value)) !== null) {
      out.push(m[3]!.replace(/\\(.)/g, "$1"));
      end = re.lastIndex;
      if (end >= value.length) break;
    }
    if (end === 0 && value.trim() !== "") out.push(value.trim());
  }
  return out;
}

/** Tells each warning once per process (same server and text), through the sink. */
export function tellWarnings(server: string, method: string, path: string, texts: readonly string[]): void {
  for (const text of texts) {
    const key = `${server}\n${text}`;
    if (told.has(key)) continue;
    told.add(key);
    const w = { server, method, path, text };
    all.push(w);
    sink(w);
  }
}
