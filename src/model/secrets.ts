// Which values of a cluster's configuration are credentials, and how a masked value is shown: one rule for every output.
import type { Values } from "./values.js";

/** What a secret value is replaced with, in diffs, messages, descriptions and debug bundles. */
export const MASK = "<masked>";

/** Env var names whose literal values are credentials. */
export const SECRET_ENV_NAME = /(pass(word)?|secret|token|credential|private|api[-_]?key|endpoint|dsn)/i;

/**
 * True when `path` in the values document `root` holds a credential: the external database endpoint, or the
 * value of an env entry whose name looks secret (`DB_PASSWORD`, `API_TOKEN`, `S3_SECRET`, ...).
 */
export function isSecretValuesPath(root: unknown, path: readonly (string | number)[]): boolean {
  const n = path.length;
  if (n >= 2 && path[n - 1] === "endpoint" && path[n - 2] === "external") return true;
  if (n >= 3 && path[n - 1] === "value" && typeof path[n - 2] === "number" && path[n - 3] === "env") {
    const name = valueAt(root, [...path.slice(0, -1), "name"]);
    return typeof name !== "string" || SECRET_ENV_NAME.test(name);
  }
  return false;
}

/** A copy of effective values with every credential (isSecretValuesPath) masked. */
export function maskValues(values: Values): Values {
  const copy = structuredClone(values);
  const ext = copy.controlPlane.backingStore.database.external;
  if (ext.endpoint) ext.endpoint = MASK;
  for (const e of copy.controlPlane.statefulSet.env) if (SECRET_ENV_NAME.test(e.name) && e.value) e.value = MASK;
  return copy;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of path) node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[String(seg)] : undefined;
  return node;
}
