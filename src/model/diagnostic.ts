// A problem found in the repository, located at a file, line and column.
import { maskShapedCredentials } from "./secrets.js";

export type Severity = "error" | "warning";

export interface Diagnostic {
  /** Repository-relative path, `/`-separated. */
  file: string;
  /** 1-based; 0 when the problem concerns the file (or folder) as a whole. */
  line: number;
  /** 1-based; 0 when unknown. */
  col: number;
  severity: Severity;
  message: string;
  /** A short stable identifier of the rule that found it (`schema`, `yaml-syntax`, `mesh-conflict`, ...). */
  code: string;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return a.file < b.file
    ? -1
    : a.file > b.file
      ? 1
      : a.line - b.line || a.col - b.col || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}

/** `file:line:col: severity: message`, or `file: severity: message` for a problem of the whole file. */
export function formatDiagnostic(d: Diagnostic): string {
  const at = d.line > 0 ? `${d.file}:${d.line}:${d.col}` : d.file;
  return `${at}: ${d.severity}: ${maskShapedCredentials(d.message)}`;
}
