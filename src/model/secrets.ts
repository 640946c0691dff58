// Which values of a cluster's configuration are credentials, and how a masked value is shown: one rule for every output.
import type { Values } from "./values.js";

/** What a secret value is replaced with, in diffs, messages, descriptions and debug bundles. */
export const MASK = "<masked>";

/** Env var names whose literal values are credentials (`*PASSWORD*`, `*TOKEN*`, `*SECRET*`, `*KEY*`, `*ENDPOINT*`, `*DSN*`, ...). */
export const SECRET_ENV_NAME = /(pass(word)?|secret|token|key|credential|private|auth|endpoint|dsn)/i;

/** `scheme://user:password@`: the password of a URL's userinfo. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*):([^\s@/"']+)@/gi;

/** A text with the password of every `scheme://user:password@` URL in it replaced by `mask`. */
export function maskUrlCredentials(text: string, mask = MASK): string {
  return text.replace(URL_CREDENTIAL, (_m, head: string) => `${head}:${mask}@`);
}

/** True when a text holds a URL with a password. */
export function hasUrlCredential(text: string): boolean {
  URL_CREDENTIAL.lastIndex = 0;
  const found = URL_CREDENTIAL.test(text);
  URL_CREDENTIAL.lastIndex = 0;
  return found;
}

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

/** A copy of effective values with every credential (isSecretValuesPath, and passwords inside URLs anywhere) masked. */
export function maskValues(values: Values): Values {
  const copy = maskUrlsDeep(structuredClone(values)) as Values;
  const ext = copy.controlPlane.backingStore.database.external;
  if (ext.endpoint) ext.endpoint = MASK;
  for (const e of copy.controlPlane.statefulSet.env) if (SECRET_ENV_NAME.test(e.name) && e.value) e.value = MASK;
  return copy;
}

/** Every string of a JSON-like value with URL passwords masked (in place for objects and arrays; returns the value). */
export function maskUrlsDeep(node: unknown): unknown {
  if (typeof node === "string") return maskUrlCredentials(node);
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) node[i] = maskUrlsDeep(node[i]);
    return node;
  }
  if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) (node as Record<string, unknown>)[k] = maskUrlsDeep(v);
  }
  return node;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of path) node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[String(seg)] : undefined;
  return node;
}
