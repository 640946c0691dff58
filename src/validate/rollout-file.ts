// Reads fleet/rollout.yaml from a repository: parsed, checked against schemas/rollout.schema.json with located errors,
// settings resolved.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "../model/diagnostic.js";
import { loadYamlFile } from "../repo/load.js";
import { fileDiagnostic, SourceFile } from "./finding.js";
import { schemaFindings } from "./schema-errors.js";
import { validatorFor } from "./schemas.js";
import { ROLLOUT_FILE, rolloutSettings, type RolloutFile, type RolloutSettings } from "../model/rollout-file.js";

export interface LoadedRollout {
  /** Whether the repository has fleet/rollout.yaml. */
  present: boolean;
  /** The settings when the file is valid. */
  settings?: RolloutSettings;
  /** Its problems, located in fleet/rollout.yaml. */
  diagnostics: Diagnostic[];
}

/** fleet/rollout.yaml of the repository at `realRoot`: absent, invalid (located diagnostics) or its settings. */
export function loadRollout(realRoot: string): LoadedRollout {
  // Anything at the path (a folder, a symlink out of the repository) is read by the safe reader, which refuses it.
  if (!lstatSync(join(realRoot, ...ROLLOUT_FILE.split("/")), { throwIfNoEntry: false }))
    return { present: false, diagnostics: [] };
  const loaded = loadYamlFile(realRoot, ROLLOUT_FILE);
  if (!loaded.ok) return { present: true, diagnostics: [loaded.diagnostic] };
  const doc = loaded.docs[0] ?? null;
  const diagnostics: Diagnostic[] = [];
  if (loaded.docs.length > 1)
    diagnostics.push(
      fileDiagnostic(ROLLOUT_FILE, "error", "rollout", "fleet/rollout.yaml must hold one YAML document"),
    );
  const validate = validatorFor("rollout");
  if (!validate(doc)) {
    const source = new SourceFile(ROLLOUT_FILE, loaded.text, loaded.events);
    source.report(schemaFindings("rollout", 0, doc, validate.errors ?? []), diagnostics);
    source.flush(diagnostics);
    return { present: true, diagnostics };
  }
  const file = doc as RolloutFile;
  // Rules the schema cannot say: wave names are unique; cumulative percentages do not go down.
  const source = new SourceFile(ROLLOUT_FILE, loaded.text, loaded.events);
  const seen = new Set<string>();
  let lastPercent = 0;
  file.waves.forEach((w, i) => {
    if (seen.has(w.name))
      diagnostics.push(
        source.diagnostic({
          doc: 0,
          path: ["waves", i, "name"],
          at: "value",
          severity: "error",
          code: "rollout",
          message: `wave "${w.name}" is named twice: wave names must be unique`,
        }),
      );
    seen.add(w.name);
    if (w.percent !== undefined) {
      if (w.percent < lastPercent)
        diagnostics.push(
          source.diagnostic({
            doc: 0,
            path: ["waves", i, "percent"],
            at: "value",
            severity: "error",
            code: "rollout",
            message:
              `percent ${w.percent} is below an earlier wave's ${lastPercent}: percentages are cumulative ` +
              `(the share reached by the end of the wave)`,
          }),
        );
      lastPercent = Math.max(lastPercent, w.percent);
    }
  });
  if (diagnostics.some((d) => d.severity === "error")) return { present: true, diagnostics };
  return { present: true, settings: rolloutSettings(file), diagnostics };
}
