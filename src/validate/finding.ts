// A problem inside a parsed file, located by document and path; turned into a Diagnostic (with line and column) only when reported.
import type { Diagnostic, Severity } from "../model/diagnostic.js";
import { YamlPositions, type PathSegment } from "../repo/positions.js";

export interface Finding {
  /** Index of the document within its file. */
  doc: number;
  path: PathSegment[];
  /** Point at the key of the last path segment ("key") or at its value ("value"). */
  at: "key" | "value";
  severity: Severity;
  code: string;
  message: string;
}

/** One parsed file: its text (for positions, computed lazily) and where its diagnostics go. */
export class SourceFile {
  private positions: YamlPositions | undefined;

  constructor(
    readonly file: string,
    readonly text: string,
  ) {}

  /** The diagnostic of a finding, with the line and column of its path (parsing positions on first use). */
  diagnostic(f: Finding): Diagnostic {
    const pos = (this.positions ??= new YamlPositions(this.text)).locate(f.doc, f.path, f.at);
    return { file: this.file, line: pos.line, col: pos.col, severity: f.severity, code: f.code, message: f.message };
  }
}

/** A diagnostic about a file (or folder) as a whole. */
export function fileDiagnostic(file: string, severity: Severity, code: string, message: string, line = 0, col = 0): Diagnostic {
  return { file, line, col, severity, code, message };
}

/** `a.b[0].c` for a path; `(top level)` for the empty path. */
export function showPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? seg : /^[A-Za-z0-9_-]+$/.test(seg) ? `.${seg}` : `["${seg}"]`;
  }
  return out === "" ? "(top level)" : out;
}
