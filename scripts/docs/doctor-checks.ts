// Generates the tables of vc doctor's checks (README.md, docs/troubleshooting.md) from the coverage table in src/ops/doctor/coverage.ts.
import { COVERAGE, ROWS, type Coverage } from "../../src/ops/doctor/coverage.js";

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** Coverage entries of one section, grouped by row in table order. */
function groups(section: "3" | "7"): Array<[string, Coverage[]]> {
  const out = new Map<string, Coverage[]>();
  for (const c of COVERAGE) if (ROWS[c.row].section === section) out.set(c.row, [...(out.get(c.row) ?? []), c]);
  return [...out];
}

/** The README's table: each row of spec section 7 with the checks that find it and their severities. */
export function readmeDoctorTable(): string {
  const lines = ["| failure the service documents | `vc doctor` check | severity |", "|---|---|---|"];
  for (const [, entries] of groups("7")) {
    entries.forEach((c, i) => lines.push(`| ${i === 0 ? cell(ROWS[c.row].condition) : ""} | \`${c.check}\` | ${c.severity} |`));
  }
  return lines.join("\n");
}

/** docs/troubleshooting.md's tables: rows, checks, severities, when each fires, and what to do. */
export function troubleshootingTables(): string {
  const table = (section: "3" | "7", heading: string) => {
    const lines = [`| ${heading} | check | severity | reported when | what to do |`, "|---|---|---|---|---|"];
    for (const [, entries] of groups(section)) {
      entries.forEach((c, i) => {
        const row = ROWS[c.row];
        lines.push(`| ${i === 0 ? cell(row.condition) : ""} | \`${c.check}\` | ${c.severity} | ${cell(c.when)} | ${i === 0 ? cell(row.resolution) : ""} |`);
      });
    }
    return lines.join("\n");
  };
  return [
    "Failures of the service's errors table:",
    "",
    table("7", "failure"),
    "",
    "States of the virtual cluster's pods:",
    "",
    table("3", "state"),
  ].join("\n");
}

/** `text` with the region between `<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->` replaced. */
export function replaceRegion(text: string, name: string, content: string): string {
  const begin = `<!-- begin generated: ${name} (npm run docs) -->`;
  const end = `<!-- end generated: ${name} -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the markers of the generated region ${name} are missing: ${begin} ... ${end}`);
  return `${text.slice(0, from + begin.length)}\n${content}\n${text.slice(to)}`;
}
