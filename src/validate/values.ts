// Values files: schema checks per file, layering into effective values with the schema's defaults, and the standalone
// check for `vc create -f`.
import { compareDiagnostics, type Diagnostic } from "../model/diagnostic.js";
import type { Values } from "../model/values.js";
import { deepMerge, isMapping, layerSetting, type Mapping } from "../repo/merge.js";
import { parseYaml } from "../repo/yaml.js";
import { fileDiagnostic, SourceFile, type Finding } from "./finding.js";
import { schemaFindings } from "./schema-errors.js";
import { defaultingValidatorFor, validatorFor } from "./schemas.js";
import { valuesRules, type RuleFinding } from "./values-rules.js";

/** Schema findings of one values document (no defaults applied, input untouched). */
export function checkValuesDocument(doc: unknown, index = 0): Finding[] {
  const validate = validatorFor("values");
  if (validate(doc)) return [];
  return schemaFindings("values", index, doc, validate.errors ?? []);
}

/**
 * The effective values of a raw (merged) values mapping: a copy with every default filled in.
 * Throws an Error naming the problems when the input does not satisfy the schema.
 */
export function effectiveValues(raw: unknown): Values {
  const copy: unknown = raw === undefined || raw === null ? {} : copyData(raw);
  const validate = defaultingValidatorFor("values");
  if (!validate(copy)) {
    const problems = schemaFindings("values", 0, copy, validate.errors ?? []).map((f) => f.message);
    throw new Error(`invalid values: ${problems.join("; ")}`);
  }
  return copy as Values;
}

/**
 * A deep copy of parsed YAML data (mappings, lists, scalars): much cheaper than structuredClone for small documents.
 */
function copyData(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(copyData);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copyData((v as Record<string, unknown>)[k]);
  return out;
}

export interface ValuesLayer {
  source: SourceFile;
  doc: Mapping;
}

/**
 * Merges checked layers in order and applies the rules beyond the schema; findings point at the layer setting the key.
 */
export function layerValues(layers: readonly ValuesLayer[]): { values?: Values; diagnostics: Diagnostic[] } {
  let merged: Mapping = {};
  for (const l of layers) merged = deepMerge(merged, l.doc);
  let values: Values;
  try {
    values = effectiveValues(merged);
  } catch (err) {
    const last = layers[layers.length - 1];
    return {
      diagnostics: [fileDiagnostic(last?.source.file ?? "values.yaml", "error", "schema", (err as Error).message)],
    };
  }
  const diagnostics = valuesRules(values, merged).map((r) => ruleDiagnostic(layers, r));
  return { values, diagnostics };
}

function ruleDiagnostic(layers: readonly ValuesLayer[], r: RuleFinding): Diagnostic {
  let i = -1;
  for (const path of r.paths) {
    i = layerSetting(
      layers.map((l) => l.doc),
      path,
    );
    if (i >= 0)
      return layers[i]!.source.diagnostic({
        doc: 0,
        path: path,
        at: "key",
        severity: r.severity,
        code: r.code,
        message: r.message,
      });
  }
  const last = layers[layers.length - 1];
  return fileDiagnostic(last?.source.file ?? "values.yaml", r.severity, r.code, r.message);
}

/** Every problem of a standalone values file (`vc create -f values.yaml`): YAML, schema and rules, located. */
export function validateValuesDocument(text: string, file: string): Diagnostic[] {
  const parsed = parseYaml(text);
  if (!parsed.ok)
    return [
      fileDiagnostic(file, "error", parsed.error.code, parsed.error.message, parsed.error.line, parsed.error.col),
    ];
  const source = new SourceFile(file, text, parsed.events);
  const docs = parsed.docs;
  if (docs.length === 0 || (docs.length === 1 && docs[0] === null)) {
    return [fileDiagnostic(file, "warning", "empty-file", "empty values file: every default applies")];
  }
  if (docs.length > 1)
    return [
      fileDiagnostic(file, "error", "values-documents", `a values file holds one document, found ${docs.length}`),
    ];
  const doc = docs[0];
  if (!isMapping(doc))
    return [
      source.diagnostic({
        doc: 0,
        path: [],
        at: "value",
        severity: "error",
        code: "not-a-mapping",
        message: `a values file must be a mapping, found ${kindOf(doc)}`,
      }),
    ];
  const findings = checkValuesDocument(doc);
  if (findings.length === 0) return layerValues([{ source, doc }]).diagnostics.sort(compareDiagnostics);
  const diagnostics: Diagnostic[] = [];
  source.report(findings, diagnostics);
  source.flush(diagnostics);
  return diagnostics.sort(compareDiagnostics);
}

export function kindOf(v: unknown): string {
  if (v === null) return "an empty document";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `a ${typeof v} (${JSON.stringify(v)})`;
}
