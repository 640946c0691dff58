// The human-readable report of `vc doctor`: one block per finding, the resolution under it.
import type { Finding } from "./types.js";

export function formatFindings(cluster: string, namespace: string, findings: readonly Finding[], unreadable: Record<string, string | undefined> = {}): string {
  const skipped = Object.entries(unreadable)
    .filter(([, why]) => why)
    .map(([what, why]) => `not checked (${what}): ${why}`);
  const tail = skipped.length ? `${skipped.join("\n")}\n` : "";
  if (findings.length === 0) return `virtual cluster ${cluster} (namespace ${namespace}): no problems found\n${tail}`;
  const errors = findings.filter((f) => f.severity === "error").length;
  const lines = [`virtual cluster ${cluster} (namespace ${namespace}): ${errors} error(s), ${findings.length - errors} warning(s)`, ""];
  for (const f of findings) {
    lines.push(`${f.severity.toUpperCase()} [${f.check}] ${f.object}: ${f.message}`);
    lines.push(`  fix: ${f.resolution}`);
  }
  return `${lines.join("\n")}\n${tail}`;
}
