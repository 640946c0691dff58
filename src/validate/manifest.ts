// One document of a cluster folder's manifest folders (mesh/, certificates/): a mapping, a kind and apiVersion the
// folder takes, its schema and rules.
import type { KubeObject } from "../kube/object.js";
import { isMapping } from "../repo/merge.js";
import type { Finding } from "./finding.js";
import { schemaFindings } from "./schema-errors.js";
import { validatorFor, type SchemaName } from "./schemas.js";
import { kindOf } from "./values.js";

/** Namespace of a manifest that names none. */
const DEFAULT_NAMESPACE = "default";

/** What a manifest folder accepts, and how it words what it refuses. */
export interface ManifestFamily {
  /** "a mesh manifest", "a certificate manifest". */
  what: string;
  apiVersion: string;
  /** The kinds synced, each with its schema. */
  kinds: Readonly<Record<string, SchemaName>>;
  /** Code of the findings about kind and apiVersion. */
  kindCode: string;
  /** The end of "missing kind: use …". */
  kindsHint: string;
  unsupportedKind(kind: string): string;
  wrongApiVersion(apiVersion: string): string;
  /** Keys no schema knows are warnings (fields the spec does not show), not errors. */
  unknownKeysWarn?: boolean;
  /** Rules of one document that a schema cannot say clearly. */
  rules(kind: string, spec: Record<string, unknown>, index: number, out: Finding[]): void;
}

/**
 * Findings of one document; `object` is set when it is an object of the family without errors (namespace defaulted).
 */
export function checkManifest(
  family: ManifestFamily,
  doc: unknown,
  index: number,
): { findings: Finding[]; object?: KubeObject } {
  const kindError = (message: string, path: Finding["path"] = [], code = family.kindCode): Finding => ({
    doc: index,
    path,
    at: "key",
    severity: "error",
    code,
    message,
  });
  if (!isMapping(doc))
    return {
      findings: [
        { ...kindError(`${family.what} must be a mapping, found ${kindOf(doc)}`, [], "not-a-mapping"), at: "value" },
      ],
    };
  const { apiVersion, kind } = doc;
  if (typeof kind !== "string" || kind === "")
    return { findings: [kindError(`missing kind: use ${family.kindsHint}`)] };
  if (typeof apiVersion !== "string" || apiVersion === "")
    return { findings: [kindError(`missing apiVersion: use ${family.apiVersion}`)] };
  if (!Object.hasOwn(family.kinds, kind)) return { findings: [kindError(family.unsupportedKind(kind), ["kind"])] };
  if (apiVersion !== family.apiVersion)
    return { findings: [kindError(family.wrongApiVersion(apiVersion), ["apiVersion"])] };
  const schema = family.kinds[kind]!;
  const validate = validatorFor(schema);
  const findings = validate(doc)
    ? []
    : schemaFindings(schema, index, doc, validate.errors ?? [], {
        unknownKeysWarn: family.unknownKeysWarn,
        what: kind,
      });
  family.rules(kind, isMapping(doc.spec) ? doc.spec : {}, index, findings);
  for (const f of findings) if (f.severity === "error") return { findings };
  const object = doc as unknown as KubeObject;
  if (object.metadata.namespace === undefined) object.metadata.namespace = DEFAULT_NAMESPACE;
  return { findings, object };
}
