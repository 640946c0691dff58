// The fleet policy file (policy.yaml at the repository root): loaded and checked against its schema, then enforced on
// each valid cluster with located errors.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "../model/diagnostic.js";
import { loadYamlFile } from "../repo/load.js";
import { isMapping, layerSetting } from "../repo/merge.js";
import { fileDiagnostic, SourceFile } from "./finding.js";
import type { ClusterResult } from "./result.js";
import { POLICY_FILE, policyFindings, type Policy } from "./policy-rules.js";
import { schemaFindings } from "./schema-errors.js";
import { validatorFor } from "./schemas.js";
import { kindOf } from "./values.js";

export interface LoadedPolicy {
  /** The policy when the file exists and is valid. */
  policy?: Policy;
  /** True when policy.yaml exists but is not valid: then no cluster may be applied (its bounds cannot be enforced). */
  broken: boolean;
  diagnostics: Diagnostic[];
}

/** Reads policy.yaml from the repository root `realRoot`; no file is no policy. */
export function loadPolicy(realRoot: string): LoadedPolicy {
  try {
    lstatSync(join(realRoot, POLICY_FILE));
  } catch {
    return { broken: false, diagnostics: [] };
  }
  const loaded = loadYamlFile(realRoot, POLICY_FILE);
  if (!loaded.ok) return { broken: true, diagnostics: [loaded.diagnostic] };
  const source = new SourceFile(POLICY_FILE, loaded.text, loaded.events);
  const docs = loaded.docs.filter((d) => d !== null);
  if (docs.length === 0)
    return {
      policy: {},
      broken: false,
      diagnostics: [fileDiagnostic(POLICY_FILE, "warning", "empty-file", "empty fleet policy: it bounds nothing")],
    };
  if (loaded.docs.length > 1) {
    return {
      broken: true,
      diagnostics: [
        source.diagnostic({
          doc: 1,
          path: [],
          at: "value",
          severity: "error",
          code: "documents",
          message: `the fleet policy holds one document, found ${loaded.docs.length}`,
        }),
      ],
    };
  }
  const doc = loaded.docs[0];
  if (!isMapping(doc)) {
    return {
      broken: true,
      diagnostics: [
        source.diagnostic({
          doc: 0,
          path: [],
          at: "value",
          severity: "error",
          code: "not-a-mapping",
          message: `the fleet policy must be a mapping, found ${kindOf(doc)}`,
        }),
      ],
    };
  }
  const validate = validatorFor("policy");
  if (validate(doc)) return { policy: doc as Policy, broken: false, diagnostics: [] };
  const diagnostics: Diagnostic[] = [];
  source.report(schemaFindings("policy", 0, doc, validate.errors ?? []), diagnostics);
  source.flush(diagnostics);
  return { broken: true, diagnostics };
}

/**
 * Applies the loaded policy to a cluster result in place: a valid cluster that crosses a bound gets one
 * located error per crossing and becomes invalid (its spec is dropped); with a broken policy file every
 * valid cluster becomes invalid. Files are read again only when there is something to report.
 */
export function enforcePolicy(realRoot: string, result: ClusterResult, loaded: LoadedPolicy): void {
  if (!result.spec) return;
  if (loaded.broken) {
    result.diagnostics.push(
      fileDiagnostic(
        result.dir,
        "error",
        "policy-invalid",
        `not applied: the fleet policy ${POLICY_FILE} is invalid and cannot be enforced; fix its errors first`,
      ),
    );
    delete result.spec;
    result.valid = false;
    return;
  }
  if (!loaded.policy) return;
  const findings = policyFindings(loaded.policy, result.spec.values, result.spec.mesh, result.spec.certificates);
  if (findings.length === 0) return;
  const files = new Map<string, { source: SourceFile; doc: unknown } | undefined>();
  const fileOf = (file: string): { source: SourceFile; doc: unknown } | undefined => {
    if (!files.has(file)) {
      const l = loadYamlFile(realRoot, file);
      files.set(file, l.ok ? { source: new SourceFile(file, l.text, l.events), doc: l.docs[0] } : undefined);
    }
    return files.get(file);
  };
  const valuesFiles = result.spec.valuesFiles;
  for (const f of findings) {
    if (f.where === "manifest") {
      const source = fileOf(f.file)?.source;
      result.diagnostics.push(
        source
          ? source.diagnostic({
              doc: f.doc,
              path: f.path,
              at: "value",
              severity: "error",
              code: "policy",
              message: f.message,
            })
          : fileDiagnostic(f.file, "error", "policy", f.message),
      );
      continue;
    }
    // A values finding points into the last values file that sets the key (as the values rules do).
    const docs = valuesFiles.map((file) => fileOf(file)?.doc);
    let placed: Diagnostic | undefined;
    for (const path of f.paths) {
      const i = layerSetting(docs, path);
      if (i < 0) continue;
      placed = fileOf(valuesFiles[i]!)!.source.diagnostic({
        doc: 0,
        path,
        at: f.at ?? "value",
        severity: "error",
        code: "policy",
        message: f.message,
      });
      break;
    }
    result.diagnostics.push(
      placed ?? fileDiagnostic(valuesFiles[0] ?? `${result.dir}/values.yaml`, "error", "policy", f.message),
    );
  }
  delete result.spec;
  result.valid = false;
}
