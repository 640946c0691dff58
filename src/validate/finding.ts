// A problem inside a parsed file, located by document and path; turned into a Diagnostic (with line and column) only
// when reported.
import type { Event } from "js-yaml";
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

/** A finding of a rule across a cluster's files, with the file it points into. */
export type PlacedFinding = Finding & { file: string };

/**
 * Problems reported per file; past this, one line says how many more there are (bounds the work a hostile file can
 * cause).
 */
export const MAX_FINDINGS_PER_FILE = 100;

/** One parsed file: its text (for positions, computed lazily) and where its diagnostics go. */
export class SourceFile {
  private positions: YamlPositions | undefined;
  private reported = 0;
  private omitted = 0;
  private omittedErrors = false;

  /** `events`: the parser's events of `text`, when at hand (positions then need no second parse). */
  constructor(
    readonly file: string,
    readonly text: string,
    private events?: Event[],
  ) {}

  /**
   * The diagnostic of a finding, with the line and column of its path (the document's node tree built on first use).
   */
  diagnostic(f: Finding): Diagnostic {
    const pos = (this.positions ??= new YamlPositions(this.text, this.events)).locate(f.doc, f.path, f.at);
    return { file: this.file, line: pos.line, col: pos.col, severity: f.severity, code: f.code, message: f.message };
  }

  /**
   * Adds the diagnostics of `findings` to `out`, up to MAX_FINDINGS_PER_FILE for this file; the rest are only counted.
   */
  report(findings: readonly Finding[], out: Diagnostic[]): void {
    for (const f of findings) {
      if (this.reported < MAX_FINDINGS_PER_FILE) {
        this.reported++;
        out.push(this.diagnostic(f));
      } else {
        this.omitted++;
        if (f.severity === "error") this.omittedErrors = true;
      }
    }
  }

  /** Lets go of the parser's events once the file's own checks are done (a rare later finding parses again). */
  release(): void {
    this.events = undefined;
    this.positions?.release();
  }

  /** After the file's findings: one diagnostic naming how many were not shown, if any. */
  flush(out: Diagnostic[]): void {
    if (this.omitted === 0) return;
    out.push(
      fileDiagnostic(
        this.file,
        this.omittedErrors ? "error" : "warning",
        "too-many-problems",
        `${this.omitted} more problem${this.omitted === 1 ? " in this file is" : "s in this file are"} not shown ` +
          `(only the first ${MAX_FINDINGS_PER_FILE} are): fix those and validate again`,
      ),
    );
    this.omitted = 0;
  }
}

/** A diagnostic about a file (or folder) as a whole. */
export function fileDiagnostic(
  file: string,
  severity: Severity,
  code: string,
  message: string,
  line = 0,
  col = 0,
): Diagnostic {
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
