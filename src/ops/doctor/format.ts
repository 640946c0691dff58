// The human-readable report of `vc doctor`: findings grouped by severity (errors, warnings, notes), the resolution
// under each.
import { escapeControls } from "../../model/escape.js";
import { SEVERITIES, type Finding, type Severity } from "./types.js";

const HEADINGS: Record<Severity, string> = { error: "errors", warning: "warnings", note: "notes" };

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function formatFindings(
  cluster: string,
  namespace: string,
  findings: readonly Finding[],
  unreadable: Record<string, string | undefined> = {},
  remarks: readonly string[] = [],
): string {
  const skipped = Object.entries(unreadable)
    .filter(([, why]) => why)
    .map(([what, why]) => escapeControls(`not checked (${what}): ${why}`));
  const tail = skipped.length ? `${skipped.join("\n")}\n` : "";
  const of = (severity: Severity) => findings.filter((f) => f.severity === severity);
  const problems = of("error").length + of("warning").length;
  const summary =
    problems === 0
      ? `no problems found${of("note").length ? `, ${plural(of("note").length, "note")}` : ""}`
      : SEVERITIES.map((s) => plural(of(s).length, s)).join(", ");
  const lines = [`virtual cluster ${cluster} (namespace ${namespace}): ${summary}`, ...remarks];
  for (const severity of SEVERITIES) {
    const group = of(severity);
    if (group.length === 0) continue;
    lines.push("", `${HEADINGS[severity]}:`);
    for (const f of group) {
      lines.push(`${f.severity.toUpperCase()} [${f.check}] ${f.object}: ${f.message}`);
      lines.push(`  fix: ${f.resolution}`);
    }
  }
  if (tail && findings.length) lines.push("");
  // Objects and messages come from the host: each line stays one line, its control characters shown (model/escape.ts).
  return `${lines.map(escapeControls).join("\n")}\n${tail}`;
}
