// Generates docs/values-reference.md from schemas/: every key of the values file, cluster.yaml, the mesh kinds and
// Certificates.
import { readFileSync } from "node:fs";
import { join } from "node:path";

interface Schema {
  $ref?: string;
  $defs?: Record<string, Schema>;
  title?: string;
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  items?: Schema;
}

/** The schema files, in the order the reference shows them, with the file each describes. */
export const SCHEMA_FILES: ReadonlyArray<{ file: string; describes: string }> = [
  { file: "values.schema.json", describes: "`clusters/<name>/values.yaml` (and `values.*.yaml` layers)" },
  { file: "cluster.schema.json", describes: "`clusters/<name>/cluster.yaml`" },
  { file: "mesh/virtualservice.schema.json", describes: "VirtualService manifests under `clusters/<name>/mesh/`" },
  { file: "mesh/destinationrule.schema.json", describes: "DestinationRule manifests under `clusters/<name>/mesh/`" },
  { file: "mesh/gateway.schema.json", describes: "Gateway manifests under `clusters/<name>/mesh/`" },
  {
    file: "certmanager/certificate.schema.json",
    describes: "cert-manager Certificate manifests under `clusters/<name>/certificates/`",
  },
];

/**
 * Text for a table cell: pipes escaped, one line, and \`<name>\` outside code spans kept visible (not read as HTML).
 */
const cell = (text: string): string =>
  text
    .replace(/\|/g, "\\|")
    .replace(/\n+/g, " ")
    .split("`")
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, "&lt;").replace(/>/g, "&gt;") : part))
    .join("`");
const code = (v: unknown): string => `\`${typeof v === "string" && v !== "" ? v : JSON.stringify(v)}\``;

function deref(s: Schema, root: Schema): { schema: Schema; def?: string } {
  if (!s.$ref) return { schema: s };
  const m = /^#\/\$defs\/(.+)$/.exec(s.$ref);
  const target = m ? root.$defs?.[m[1]!] : undefined;
  if (!target) throw new Error(`unresolvable $ref ${s.$ref}`);
  return { schema: { ...target, ...s, $ref: undefined, description: s.description ?? target.description }, def: m![1] };
}

function typeOf(s: Schema, root: Schema, def?: string): string {
  if (s.const !== undefined) return code(s.const);
  if (s.enum) return s.enum.map(code).join(", ");
  let t = Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "any");
  if (t === "array" && s.items) {
    const item = deref(s.items, root);
    t = `list of ${typeOf(item.schema, root, item.def)}`;
  }
  if (t === "object" && !s.properties && s.additionalProperties && typeof s.additionalProperties === "object") {
    const value = deref(s.additionalProperties, root);
    t = `map of ${typeOf(value.schema, root, value.def)}`;
  }
  return def ? `${t} (${def})` : t;
}

function constraints(s: Schema, def?: string): string[] {
  const out: string[] = [];
  if (s.pattern && !def) out.push(`pattern ${code(s.pattern)}`);
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined && s.minLength > 1) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined && !def) out.push(`at most ${s.maxLength} characters`);
  if (s.minItems !== undefined) out.push(`at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}`);
  return out;
}

function rows(s: Schema, root: Schema, path: string, required: boolean, out: string[][], itemOf = false): void {
  const { schema, def } = deref(s, root);
  if (path && !(itemOf && !schema.description)) {
    const limits = constraints(schema, def);
    const notes = `${schema.description ?? ""}${limits.length > 0 ? ` (${limits.join(", ")})` : ""}`.trim();
    const dflt =
      schema.default === undefined ||
      (typeof schema.default === "object" &&
        schema.default !== null &&
        Object.keys(schema.default).length === 0 &&
        schema.type === "object")
        ? required
          ? "required"
          : ""
        : code(schema.default);
    out.push([`\`${path}\``, typeOf(schema, root, def), dflt, notes]);
  }
  const prefix = path ? `${path}.` : "";
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    rows(child, root, `${prefix}${key}`, schema.required?.includes(key) ?? false, out);
  for (const [pattern, child] of Object.entries(schema.patternProperties ?? {}))
    rows(child, root, `${prefix}<key matching ${pattern}>`, false, out);
  if (typeof schema.additionalProperties === "object" && deref(schema.additionalProperties, root).schema.properties) {
    rows(schema.additionalProperties, root, `${prefix}<name>`, false, out);
  }
  if (schema.items && deref(schema.items, root).schema.properties)
    rows(schema.items, root, `${path}[]`, false, out, true);
}

/** The reference for one schema: its description, then one table row per key. */
export function schemaSection(schema: Schema, file: string, describes: string): string {
  const out: string[][] = [];
  rows(schema, schema, "", false, out);
  const lines = [
    `## ${schema.title ?? file}`,
    "",
    `Describes ${describes}; schema \`schemas/${file}\`.${schema.description ? ` ${cell(schema.description)}` : ""}`,
    "",
    "| key | type | default | meaning |",
    "|---|---|---|---|",
    ...out.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
  const defs = Object.entries(schema.$defs ?? {}).filter(([, d]) => d.description);
  if (defs.length > 0) {
    lines.push("", "Named types:", "");
    for (const [name, d] of defs)
      lines.push(`- **${name}**: ${cell(d.description!)}${d.pattern ? ` Pattern ${code(d.pattern)}.` : ""}`);
  }
  return `${lines.join("\n")}\n`;
}

/** docs/values-reference.md from the schemas under `schemasDir`. */
export function valuesReference(schemasDir: string): string {
  const head = [
    "<!-- Generated by `npm run docs` from schemas/. Do not edit: change the schemas and run it again. -->",
    "# Values reference",
    "",
    "Every key vc accepts in a cluster folder, with its type, default and meaning. The same schemas drive",
    "`vc validate` and the completion your editor offers through the `# yaml-language-server: $schema=` line that",
    "`vc init` writes. Keys marked required must be present; every other key may be left out and takes its default.",
    "Rules that involve several keys at once are described in [concepts](concepts.md#rules-beyond-the-schemas).",
    "",
  ].join("\n");
  const sections = SCHEMA_FILES.map(({ file, describes }) =>
    schemaSection(JSON.parse(readFileSync(join(schemasDir, file), "utf8")) as Schema, file, describes),
  );
  return `${head}\n${sections.join("\n")}`;
}
