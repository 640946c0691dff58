// Writes every schema's validators as ajv standalone code (what `npm run build` ships in dist/schemas/): each file
// carries the key of the schema text, options and ajv version it was made from, and is used only while they match.
import { mkdirSync, writeFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import {
  ajvOptions,
  compiledFileName,
  compiledKey,
  COMPILED_SCHEMAS_DIR,
  SCHEMA_NAMES,
  schemaDoc,
  type ValidatorMode,
} from "./schemas.js";

type StandaloneCode = (ajv: Ajv2020, validate: ValidateFunction) => string;
/** ajv's standalone generator (a CommonJS default export, seen through the ESM interop). */
const standaloneCode = ((standalone as unknown as { default?: StandaloneCode }).default ??
  standalone) as unknown as StandaloneCode;

/** Writes the precompiled validators into `dir`; returns the files written. */
export function writeCompiledSchemas(dir: URL = COMPILED_SCHEMAS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const mode of ["strict", "defaulting"] as ValidatorMode[]) {
    const ajv = new Ajv2020(ajvOptions(mode, true));
    for (const name of SCHEMA_NAMES) {
      const code = standaloneCode(ajv, ajv.compile(schemaDoc(name)));
      const file = new URL(compiledFileName(name, mode), dir);
      writeFileSync(file, `${code}\nmodule.exports.compiledKey = ${JSON.stringify(compiledKey(name, mode))};\n`);
      written.push(file.pathname);
    }
  }
  return written;
}

if (process.argv[1]?.endsWith("compile-schemas.ts")) {
  const files = writeCompiledSchemas();
  process.stdout.write(`wrote ${files.length} precompiled validators to ${COMPILED_SCHEMAS_DIR.pathname}\n`);
}
