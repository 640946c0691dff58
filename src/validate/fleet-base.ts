// The fleet's shared bases as validation sees them: fleet/groups.yaml checked against its schema, each cluster's base
// layers.
import type { Diagnostic } from "../model/diagnostic.js";
import { readFleetBase, GROUPS_FILE, FLEET_DIR, type FleetBase } from "../repo/fleet-base.js";
import { loadYamlFile } from "../repo/load.js";
import { fileDiagnostic, SourceFile } from "./finding.js";
import { schemaFindings } from "./schema-errors.js";
import { validatorFor } from "./schemas.js";

export interface LoadedFleetBase {
  base: FleetBase;
  /** Problems of fleet/ itself (reported once for the repository). */
  diagnostics: Diagnostic[];
  /** fleet/groups.yaml is invalid: no cluster can know its bases, so none is valid. */
  broken: boolean;
}

/**
 * fleet/ with fleet/groups.yaml validated; a group values file without its group is a warning (it applies to no
 * cluster).
 */
export function loadFleetBase(realRoot: string): LoadedFleetBase {
  const { base, diagnostics } = readFleetBase(realRoot);
  let broken = diagnostics.some((d) => d.severity === "error");
  if (base.groupsDoc !== undefined && !broken) {
    const validate = validatorFor("groups");
    if (!validate(base.groupsDoc)) {
      const loaded = loadYamlFile(realRoot, GROUPS_FILE);
      if (loaded.ok) {
        const source = new SourceFile(GROUPS_FILE, loaded.text, loaded.events);
        source.report(schemaFindings("groups", 0, base.groupsDoc, validate.errors ?? []), diagnostics);
        source.flush(diagnostics);
      }
      broken = true;
      base.groups = [];
    }
  }
  const known = new Set(base.groups.map((g) => g.name));
  for (const g of [...base.groupValues].sort()) {
    if (!known.has(g))
      diagnostics.push(
        fileDiagnostic(
          `${FLEET_DIR}/values.${g}.yaml`,
          "warning",
          "unknown-group",
          `no group "${g}" in ${GROUPS_FILE}: this base applies to no cluster`,
        ),
      );
  }
  return { base, diagnostics, broken };
}

/** The error a cluster gets while fleet/groups.yaml is invalid. */
export function brokenGroupsDiagnostic(dir: string): Diagnostic {
  return fileDiagnostic(
    dir,
    "error",
    "fleet-groups",
    `${GROUPS_FILE} is invalid (see its errors): this cluster's base layers are unknown, so it is not applied`,
  );
}
