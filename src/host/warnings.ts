// Warnings the API server returns in `Warning` headers (deprecated APIs, fields it dropped, values it changed): parsed,
// told once, and never swallowed. A client opened with its own sink (the reconciler's JSON log) tells them through a
// WarningTeller of its own; other clients share the process sink, which writes to stderr as kubectl does.

/** One server warning: the server that gave it, the request that drew it, and its text. */
export interface ServerWarning {
  server: string;
  method: string;
  path: string;
  text: string;
  /** The object the request named (`resource namespace/name`, `resource name`), when the path names one. */
  object?: string;
}

export type WarningSink = (w: ServerWarning) => void;

const stderrSink: WarningSink = (w) =>
  process.stderr.write(`warning: the API server ${w.server} warned about ${w.method} ${w.path}: ${w.text}\n`);

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

/**
 * The object an API path names: `configmaps ns/name` for `/api/v1/namespaces/ns/configmaps/name`; undefined for a
 * collection.
 */
export function objectOfPath(path: string): string | undefined {
  const parts = path
    .split("?")[0]!
    .split("/")
    .filter((p) => p !== "");
  const rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : undefined;
  if (!rest) return undefined;
  if (rest[0] === "namespaces" && rest.length >= 4) return `${rest[2]} ${rest[1]}/${rest[3]}`;
  if (rest[0] === "namespaces" && rest.length === 2) return `namespaces ${rest[1]}`;
  if (rest[0] !== "namespaces" && rest.length >= 2) return `${rest[0]} ${rest[1]}`;
  return undefined;
}

const warningOf = (server: string, method: string, path: string, text: string): ServerWarning => {
  const object = objectOfPath(path);
  return object ? { server, method, path, text, object } : { server, method, path, text };
};

/** Tells each warning once per process (same server and text), through the process sink. */
export function tellWarnings(server: string, method: string, path: string, texts: readonly string[]): void {
  for (const text of texts) {
    const key = `${server}\n${text}`;
    if (told.has(key)) continue;
    told.add(key);
    const w = warningOf(server, method, path, text);
    all.push(w);
    sink(w);
  }
}

/**
 * The warnings of one client, told through its own sink and never through the process's: each once per server, text
 * and object for the client's life (a warning about another object is told again), so a long-running reconciler logs
 * each object's warning once and two runs in one process neither share nor silence each other's.
 */
export class WarningTeller {
  private readonly told = new Set<string>();
  constructor(private readonly sink: WarningSink) {}

  tell(server: string, method: string, path: string, texts: readonly string[]): void {
    for (const text of texts) {
      const w = warningOf(server, method, path, text);
      const key = `${server}\n${text}\n${w.object ?? ""}`;
      if (this.told.has(key)) continue;
      this.told.add(key);
      this.sink(w);
    }
  }
}
