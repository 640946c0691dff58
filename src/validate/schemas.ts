// Loads the JSON Schemas of schemas/ and compiles them once with ajv (draft 2020-12). `npm run build` also writes each
// validator as ajv standalone code (dist/schemas/); a process loads that in a few milliseconds instead of compiling for
// about 60 ms per schema, and only when it was generated from the very schema text and options in use.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Ajv2020, Options, ValidateFunction } from "ajv/dist/2020.js";

/** The schemas folder shipped with vc. */
export const SCHEMAS_DIR = new URL("../../schemas/", import.meta.url);
/** Where `npm run build` writes the precompiled validators. */
export const COMPILED_SCHEMAS_DIR = new URL("../../dist/schemas/", import.meta.url);

export type SchemaName =
  | "values"
  | "cluster"
  | "policy"
  | "groups"
  | "rollout"
  | "mesh/virtualservice"
  | "mesh/destinationrule"
  | "mesh/gateway"
  | "certmanager/certificate";
export const SCHEMA_NAMES: readonly SchemaName[] = [
  "values",
  "cluster",
  "policy",
  "groups",
  "rollout",
  "mesh/virtualservice",
  "mesh/destinationrule",
  "mesh/gateway",
  "certmanager/certificate",
];

/** A strict validator reports every error and never changes its input; a defaulting one also fills in defaults. */
export type ValidatorMode = "strict" | "defaulting";

export interface SchemaDoc {
  properties?: Record<string, SchemaDoc>;
  additionalProperties?: boolean | SchemaDoc;
  patternProperties?: Record<string, SchemaDoc>;
  items?: SchemaDoc;
  $ref?: string;
  $defs?: Record<string, SchemaDoc>;
  [key: string]: unknown;
}

const texts = new Map<SchemaName, string>();
const raw = new Map<SchemaName, SchemaDoc>();
const validators: Record<ValidatorMode, Map<SchemaName, ValidateFunction>> = {
  strict: new Map(),
  defaulting: new Map(),
};

function schemaText(name: SchemaName): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`${name}.schema.json`, SCHEMAS_DIR), "utf8");
    texts.set(name, text);
  }
  return text;
}

/** The parsed JSON of a schema file. */
export function schemaDoc(name: SchemaName): SchemaDoc {
  let doc = raw.get(name);
  if (!doc) {
    doc = JSON.parse(schemaText(name)) as SchemaDoc;
    raw.set(name, doc);
  }
  return doc;
}

/** The ajv options of a mode (`source` keeps the generated code, for standalone output). */
export function ajvOptions(mode: ValidatorMode, source = false): Options {
  return {
    allErrors: true,
    strict: true,
    strictTypes: false,
    useDefaults: mode === "defaulting",
    allowUnionTypes: true,
    ...(source ? { code: { source: true } } : {}),
  };
}

/** What a precompiled validator must have been generated from: the schema text, the options and ajv's version. */
export function compiledKey(name: SchemaName, mode: ValidatorMode): string {
  const ajvVersion = (createRequire(import.meta.url)("ajv/package.json") as { version: string }).version;
  return createHash("sha256")
    .update(JSON.stringify([schemaText(name), ajvOptions(mode), ajvVersion]))
    .digest("hex");
}

/** File name of a precompiled validator in COMPILED_SCHEMAS_DIR. */
export function compiledFileName(name: SchemaName, mode: ValidatorMode): string {
  return `${name.replace("/", "__")}.${mode}.cjs`;
}

const ajvs: Partial<Record<ValidatorMode, Ajv2020>> = {};

/** ajv's compiler, loaded only when a validator must be compiled (about 100 modules a precompiled run never needs). */
function compilerFor(mode: ValidatorMode): Ajv2020 {
  const { Ajv2020: Compiler } = createRequire(import.meta.url)("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  return (ajvs[mode] ??= new Compiler(ajvOptions(mode)));
}

/** The precompiled validator when it exists and matches the schema in use; undefined otherwise (compile then). */
export function precompiled(name: SchemaName, mode: ValidatorMode, dir: URL): ValidateFunction | undefined {
  const file = new URL(compiledFileName(name, mode), dir);
  if (!existsSync(file)) return undefined;
  try {
    const mod = createRequire(import.meta.url)(file.pathname) as ValidateFunction & { compiledKey?: string };
    return mod.compiledKey === compiledKey(name, mode) ? mod : undefined;
  } catch {
    return undefined; // a damaged file is as good as none: compile
  }
}

/** The validator of `name` in `mode`: precompiled when current, else compiled now; once per process. */
function validatorIn(name: SchemaName, mode: ValidatorMode, compiledDir: URL = COMPILED_SCHEMAS_DIR): ValidateFunction {
  let fn = validators[mode].get(name);
  if (!fn) {
    fn = precompiled(name, mode, compiledDir) ?? compilerFor(mode).compile(schemaDoc(name));
    validators[mode].set(name, fn);
  }
  return fn;
}

/** A validator that reports every error and never changes its input. */
export function validatorFor(name: SchemaName): ValidateFunction {
  return validatorIn(name, "strict");
}

/** A validator that also fills in the schema's defaults (it mutates its input). */
export function defaultingValidatorFor(name: SchemaName): ValidateFunction {
  return validatorIn(name, "defaulting");
}
