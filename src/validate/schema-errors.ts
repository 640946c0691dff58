// Turns ajv errors into findings: readable messages, did-you-mean for unknown keys, the offending key's path.
import type { ErrorObject } from "ajv";
import { MASK, isSecretValuesPath } from "../model/secrets.js";
import type { PathSegment } from "../repo/positions.js";
import { MAX_FINDINGS_PER_FILE, showPath, type Finding } from "./finding.js";
import { schemaDoc, type SchemaDoc, type SchemaName } from "./schemas.js";
import { suggest } from "./suggest.js";

const LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

export interface SchemaErrorOptions {
  /** Unknown keys are warnings (mesh kinds: fields the spec does not show are kept) instead of errors. */
  unknownKeysWarn?: boolean;
  /** What the document is, for messages ("VirtualService"). */
  what?: string;
}

/**
 * Findings of one document's ajv errors. Only the first MAX_FINDINGS_PER_FILE get a message (the rest are
 * counted, not shown: see SourceFile.report), so a document with 45,000 unknown keys costs little.
 */
export function schemaFindings(
  schema: SchemaName,
  doc: number,
  value: unknown,
  errors: readonly ErrorObject[],
  opts: SchemaErrorOptions = {},
): Finding[] {
  const out: Finding[] = [];
  for (const e of errors) {
    // propertyNames reports each bad name twice (the inner keyword and propertyNames itself): keep one.
    if (e.schemaPath.includes("/propertyNames/")) continue;
    if (out.length >= MAX_FINDINGS_PER_FILE) {
      const unknownKey = e.keyword === "additionalProperties" || e.keyword === "additionalProperty";
      out.push({
        doc,
        path: [],
        at: "key",
        severity: unknownKey && opts.unknownKeysWarn ? "warning" : "error",
        code: "schema",
        message: "",
      });
      continue;
    }
    const path = instancePath(e.instancePath);
    const where = showPath(path);
    const f = (
      message: string,
      p: PathSegment[] = path,
      at: Finding["at"] = "key",
      severity: Finding["severity"] = "error",
    ): Finding => ({
      doc,
      path: p,
      at,
      severity,
      code: "schema",
      message,
    });
    switch (e.keyword) {
      case "additionalProperty":
      case "additionalProperties": {
        const key = String((e.params as { additionalProperty: string }).additionalProperty);
        const known = knownKeys(schemaDoc(schema), e.schemaPath);
        const hint = suggest(key, known) ?? nestedKey(schemaDoc(schema), e.schemaPath, key);
        const level = path.length === 0 ? "at the top level" : `in ${where}`;
        if (opts.unknownKeysWarn) {
          out.push(
            f(
              `field "${key}" ${level} is not in the checked shape of ${opts.what ?? "this kind"}: kept as ` +
                `written, not validated${hint ? ` (did you mean "${hint}"?)` : ""}`,
              [...path, key],
              "key",
              "warning",
            ),
          );
        } else {
          out.push(
            f(
              `unknown key "${key}" ` +
                `${level}${hint ? `: did you mean "${hint}"?` : known.length ? ` (known keys: ${known.join(", ")})` : ""}`,
              [...path, key],
            ),
          );
        }
        break;
      }
      case "required": {
        const missing = (e.params as { missingProperty: string }).missingProperty;
        out.push(f(`missing required key "${missing}" ${path.length === 0 ? "at the top level" : `in ${where}`}`));
        break;
      }
      case "propertyNames": {
        const name = (e.params as { propertyName: string }).propertyName;
        if (defName(e.schemaPath) === "labels")
          out.push(
            f(
              `invalid label key "${name}" in ${where}: use [prefix/]name, the name at most 63 letters, digits, ` +
                `"-", "_" or "." starting and ending with a letter or digit`,
              [...path, name],
            ),
          );
        else if (schema === "policy")
          out.push(
            f(
              `invalid key "${name}" in ${where}: use one of requests.cpu, requests.memory, limits.cpu, limits.memory`,
              [...path, name],
            ),
          );
        else
          out.push(
            f(`invalid key "${name}" in ${where}: use <plural>.<group>, e.g. "certificates.cert-manager.io"`, [
              ...path,
              name,
            ]),
          );
        break;
      }
      case "type": {
        const want = (e.params as { type: string }).type;
        const def = defName(e.schemaPath);
        const got = describe(valueAt(value, path), isSecretValuesPath(value, path));
        if (def === "quantity")
          out.push(
            f(`${where} must be a quantity string such as "200m", "512Mi" or "2Gi", got ${got} (quote numbers)`),
          );
        else if (def === "duration")
          out.push(f(`${where} must be a duration string such as "100ms" or "5s", got ${got}`));
        else out.push(f(`${where} must be ${article(want)}, got ${got}${want === "string" ? " (quote it)" : ""}`));
        break;
      }
      case "pattern": {
        const pattern = (e.params as { pattern: string }).pattern;
        const got = show(value, path);
        const def = defName(e.schemaPath);
        if (def === "quantity") out.push(f(`invalid quantity ${got} at ${where}: use forms like 200m, 1, 512Mi, 2Gi`));
        else if (def === "duration")
          out.push(f(`invalid duration ${got} at ${where}: use forms like 100ms, 5s, 1m30s`));
        else if (def === "labels")
          out.push(
            f(
              `invalid label value ${got} at ${where}: at most 63 letters, digits, "-", "_" or ".", starting and ` +
                `ending with a letter or digit`,
            ),
          );
        else if (def === "dnsName")
          out.push(
            f(
              `invalid DNS name ${got} at ${where}: lower-case labels of letters, digits and "-" separated by ".", ` +
                `optionally starting with "*."`,
            ),
          );
        else if (def === "gatewayRef")
          out.push(f(`invalid gateway ${got} at ${where}: use mesh, a Gateway name, or namespace/name`));
        else if (def === "storageClassName")
          out.push(
            f(
              `invalid storage class ${got} at ${where}: a StorageClass name is a DNS-1123 subdomain (lower-case ` +
                `letters, digits, "-" and "."; kubectl get storageclass lists them), or empty for the default class`,
            ),
          );
        else if (def === "dns1123Label" || pattern === LABEL_PATTERN)
          out.push(
            f(
              `invalid name ${got} at ${where}: must be a DNS-1123 label (lower-case letters, digits and "-", ` +
                `starting and ending with a letter or digit)`,
            ),
          );
        else if (pattern === SUBDOMAIN_PATTERN)
          out.push(
            f(
              `invalid name ${got} at ${where}: must be a DNS-1123 subdomain (lower-case letters, digits, "-" and ".")`,
            ),
          );
        else out.push(f(`invalid value ${got} at ${where}: must match ${pattern}`));
        break;
      }
      case "enum": {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map(String);
        const got = valueAt(value, path);
        const hint = typeof got === "string" ? suggest(got, allowed) : undefined;
        out.push(
          f(
            `invalid value ${show(value, path)} at ${where}: ${hint ? `did you mean "${hint}"? ` : ""}use one of ` +
              `${allowed.join(", ")}`,
          ),
        );
        break;
      }
      case "const": {
        const allowed = (e.params as { allowedValue: unknown }).allowedValue;
        out.push(f(`${where} must be ${JSON.stringify(allowed)}, got ${show(value, path)}`));
        break;
      }
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum": {
        const { comparison, limit } = e.params as { comparison: string; limit: number };
        out.push(f(`${where} must be ${comparison} ${limit}, got ${show(value, path)}`));
        break;
      }
      case "minItems":
        out.push(
          f(
            `${where} must have at least ${(e.params as { limit: number }).limit} ` +
              `entr${(e.params as { limit: number }).limit === 1 ? "y" : "ies"}`,
          ),
        );
        break;
      case "minLength":
        out.push(f(`${where} must not be empty`));
        break;
      case "maxLength":
        out.push(f(`${where} is longer than ${(e.params as { limit: number }).limit} characters`));
        break;
      default:
        out.push(f(`${where} ${e.message ?? "is invalid"}`));
    }
  }
  return out;
}

/** `/a/b~1c/0` → ["a", "b/c", 0]. */
function instancePath(pointer: string): PathSegment[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

/** The keys a schema allows at the level an additionalProperties error came from. */
function knownKeys(root: SchemaDoc, schemaPath: string): string[] {
  const props = schemaNode(root, schemaPath)?.properties;
  return props ? Object.keys(props).sort() : [];
}

/**
 * A key one to three levels below the error's level with the same name: "sync.toHost.virtualServices" for
 * "virtualServices".
 */
function nestedKey(root: SchemaDoc, schemaPath: string, key: string): string | undefined {
  const start = schemaNode(root, schemaPath);
  let level: Array<[string, SchemaDoc]> = Object.entries(start?.properties ?? {});
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: Array<[string, SchemaDoc]> = [];
    for (const [path, node] of level) {
      for (const [k, child] of Object.entries(node.properties ?? {})) {
        if (k.toLowerCase() === key.toLowerCase()) return `${path}.${k}`;
        next.push([`${path}.${k}`, child]);
      }
    }
    level = next;
  }
  return undefined;
}

function schemaNode(root: SchemaDoc, schemaPath: string): SchemaDoc | undefined {
  const parts = schemaPath.replace(/^#\//, "").split("/").slice(0, -1);
  let node: unknown = root;
  for (const p of parts)
    node =
      node && typeof node === "object"
        ? (node as Record<string, unknown>)[p.replaceAll("~1", "/").replaceAll("~0", "~")]
        : undefined;
  return node && typeof node === "object" ? (node as SchemaDoc) : undefined;
}

function defName(schemaPath: string): string | undefined {
  return /^#\/\$defs\/([^/]+)\//.exec(schemaPath)?.[1];
}

function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let node = value;
  for (const seg of path)
    node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[String(seg)] : undefined;
  return node;
}

function describe(v: unknown, secret = false): string {
  if (v === null) return "null (an empty value)";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${secret ? MASK : literal(v)}`;
}

/**
 * A value as the YAML that gives it: JSON for most, `.nan`, `.inf` and `-.inf` for the numbers JSON has no text for.
 */
function literal(v: unknown): string {
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? ".nan" : v > 0 ? ".inf" : "-.inf";
  return JSON.stringify(v) ?? String(v);
}

/** Credentials (src/model/secrets.ts) are never repeated in messages. */
function show(value: unknown, path: readonly PathSegment[]): string {
  return isSecretValuesPath(value, path) ? MASK : literal(valueAt(value, path));
}

function article(type: string): string {
  if (type === "object") return "a mapping";
  if (type === "array") return "a list";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
