// Generates the tables of vc doctor's checks (README.md, docs/troubleshooting.md) from the coverage table in
// src/ops/doctor/coverage.ts.
import { COVERAGE, RESOLUTIONS, ROWS, type Coverage, type RowKey } from "../../src/ops/doctor/coverage.js";

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** Coverage entries of one section, grouped by row in table order. */
function groups(section: "3" | "7" | "vc"): Array<[string, Coverage[]]> {
  const out = new Map<string, Coverage[]>();
  for (const c of COVERAGE) if (ROWS[c.row].section === section) out.set(c.row, [...(out.get(c.row) ?? []), c]);
  return [...out];
}

/** How many of a row's resolution steps a check performs, and the steps it does not (README). */
function performedCell(row: RowKey): string {
  const steps = RESOLUTIONS[row];
  const full = steps.filter((s) => s.by?.length && !s.not).length;
  const part = steps.filter((s) => s.by?.length && s.not).map((s) => s.step);
  const left = steps.filter((s) => !s.by?.length).map((s) => s.step);
  return [
    `${full} of ${steps.length}`,
    ...(part.length ? [`in part: ${part.join("; ")}`] : []),
    ...(left.length ? [`not: ${left.join("; ")}`] : []),
  ].join("; ");
}

/**
 * The README's table: each row of spec section 7 with the checks that find it, their severities, and how much of the
 * resolution they perform.
 */
export function readmeDoctorTable(): string {
  const lines = [
    "| failure the service documents | `vc doctor` check | severity | resolution steps performed |",
    "|---|---|---|---|",
  ];
  for (const [row, entries] of groups("7")) {
    entries.forEach((c, i) =>
      lines.push(
        `| ${i === 0 ? cell(ROWS[c.row].condition) : ""} | \`${c.check}\` | ${c.severity} | ` +
          `${i === 0 ? cell(performedCell(row as RowKey)) : ""} |`,
      ),
    );
  }
  return lines.join("\n");
}

/** Each step of each row's resolution: the checks that perform it, or why vc doctor does not. */
function resolutionTable(section: "3" | "7"): string {
  const lines = [
    "| failure | resolution step (spec) | performed by | not performed, or the part left to you |",
    "|---|---|---|---|",
  ];
  for (const [row] of groups(section)) {
    RESOLUTIONS[row as RowKey].forEach((s, i) => {
      lines.push(
        `| ${i === 0 ? cell(ROWS[row as RowKey].condition) : ""} | ${cell(s.step)} | ` +
          `${s.by?.length ? s.by.map((b) => `\`${b}\``).join(", ") : "-"} | ${s.not ? cell(s.not) : ""} |`,
      );
    });
  }
  return lines.join("\n");
}

/** docs/troubleshooting.md's tables: rows, checks, severities, when each fires, and what to do. */
export function troubleshootingTables(): string {
  const table = (section: "3" | "7" | "vc", heading: string) => {
    const lines = [`| ${heading} | check | severity | reported when | what to do |`, "|---|---|---|---|---|"];
    for (const [, entries] of groups(section)) {
      entries.forEach((c, i) => {
        const row = ROWS[c.row];
        lines.push(
          `| ${i === 0 ? cell(row.condition) : ""} | \`${c.check}\` | ${c.severity} | ${cell(c.when)} | ` +
            `${i === 0 ? cell(row.resolution) : ""} |`,
        );
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
    "",
    "What a tenant wrote in its host namespace (vc's own, beside the spec's tables):",
    "",
    table("vc", "condition"),
    "",
    "How each step of the errors table's resolutions is carried out: the checks that perform it (find the fault it " +
      "fixes and say what to do), or why vc doctor does not:",
    "",
    resolutionTable("7"),
  ].join("\n");
}

/** `text` with the region between `<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->` replaced. */
export function replaceRegion(text: string, name: string, content: string): string {
  const begin = `<!-- begin generated: ${name} (npm run docs) -->`;
  const end = `<!-- end generated: ${name} -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`the markers of the generated region ${name} are missing: ${begin} ... ${end}`);
  return `${text.slice(0, from + begin.length)}\n${content}\n${text.slice(to)}`;
}
