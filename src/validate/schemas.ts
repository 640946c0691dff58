// Loads the JSON Schemas of schemas/ and compiles them once with ajv (draft 2020-12).
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/** The schemas folder shipped with vc. */
export const SCHEMAS_DIR = new URL("../../schemas/", import.meta.url);

export type SchemaName = "values" | "cluster" | "policy" | "mesh/virtualservice" | "mesh/destinationrule" | "mesh/gateway";

export interface SchemaDoc {
  properties?: Record<string, SchemaDoc>;
  additionalProperties?: boolean | SchemaDoc;
  patternProperties?: Record<string, SchemaDoc>;
  items?: SchemaDoc;
  $ref?: string;
  $defs?: Record<string, SchemaDoc>;
  [key: string]: unknown;
}

const raw = new Map<SchemaName, SchemaDoc>();
const strictValidators = new Map<SchemaName, ValidateFunction>();
const defaultingValidators = new Map<SchemaName, ValidateFunction>();

/** The parsed JSON of a schema file. */
export function schemaDoc(name: SchemaName): SchemaDoc {
  let doc = raw.get(name);
  if (!doc) {
    doc = JSON.parse(readFileSync(new URL(`${name}.schema.json`, SCHEMAS_DIR), "utf8")) as SchemaDoc;
    raw.set(name, doc);
  }
  return doc;
}

function newAjv(useDefaults: boolean): Ajv2020 {
  return new Ajv2020({ allErrors: true, strict: true, strictTypes: false, useDefaults, allowUnionTypes: true });
}

let checker: Ajv2020 | undefined;
let defaulter: Ajv2020 | undefined;

/** A validator that reports every error and never changes its input. */
export function validatorFor(name: SchemaName): ValidateFunction {
  let fn = strictValidators.get(name);
  if (!fn) {
    fn = (checker ??= newAjv(false)).compile(schemaDoc(name));
    strictValidators.set(name, fn);
  }
  return fn;
}

/** A validator that also fills in the schema's defaults (it mutates its input). */
export function defaultingValidatorFor(name: SchemaName): ValidateFunction {
  let fn = defaultingValidators.get(name);
  if (!fn) {
    fn = (defaulter ??= newAjv(true)).compile(schemaDoc(name));
    defaultingValidators.set(name, fn);
  }
  return fn;
}
