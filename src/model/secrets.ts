// Which values of a cluster's configuration are credentials, and how a masked value is shown: one rule for every output.
import type { Values } from "./values.js";

/** What a secret value is replaced with, in diffs, messages, descriptions and debug bundles. */
export const MASK = "<masked>";

/** The words that make a name a credential's name: every rule below that looks at names derives from this list. */
const CREDENTIAL_WORDS = ["pass(?:word|wd)?", "secret", "token", "key", "credential", "private", "auth", "endpoint", "dsn"];

/** Env var names whose literal values are credentials (`*PASSWORD*`, `*TOKEN*`, `*SECRET*`, `*KEY*`, `*ENDPOINT*`, `*DSN*`, ...). */
export const SECRET_ENV_NAME = new RegExp(`(${CREDENTIAL_WORDS.join("|")})`, "i");

/** The last word of a key in free text that names a credential (`DB_PASSWORD`, `apiToken`, `x-auth-token`, `PGPASSWORD`). */
const CREDENTIAL_LAST_WORD = new RegExp(`(?:${CREDENTIAL_WORDS.join("|")})s?$`, "i");

/**
 * Credential words that name a credential in free text only after another word (`apiKey`, `SECRET_KEY`, `clientSecret`):
 * alone (`key=ns/name`, `secret=vc-config`, `endpoint=10.0.0.1:443`) they name a queue key, an object or an address in most logs.
 */
const QUALIFIED_ONLY = /^(keys?|secrets?|auth|endpoints?|private)$/i;

/** `scheme://user:password@`: the password of a URL's userinfo. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*):([^\s@/"']+)@/gi;

/** A text with the password of every `scheme://user:password@` URL in it replaced by `mask`. */
export function maskUrlCredentials(text: string, mask = MASK): string {
  return text.replace(URL_CREDENTIAL, (_m, head: string) => `${head}:${mask}@`);
}

/** The passwords of the `scheme://user:password@` URLs in a text. */
export function urlPasswords(text: string): string[] {
  return [...text.matchAll(URL_CREDENTIAL)].map((m) => m[2]!);
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

/** The credentials of a values document (what maskValues masks): the values at isSecretValuesPath, and URL passwords. */
export function valuesCredentials(root: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: Array<string | number>): void => {
    if (typeof node === "string") {
      if (node !== "" && isSecretValuesPath(root, path)) out.push(node);
      out.push(...urlPasswords(node));
    } else if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i]));
    else if (node !== null && typeof node === "object") for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(root, []);
  return out;
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

// ---- credentials in free text (logs): the same rule, applied to text whose structure is unknown ----

/** True when a key names a credential: its last word (split at `_ - .` and lower-to-upper case) ends in a credential word (QUALIFIED_ONLY ones need a word before). */
export function isCredentialName(name: string): boolean {
  const words = name.split(/[_.-]+|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean);
  const last = words[words.length - 1];
  if (last === undefined || !CREDENTIAL_LAST_WORD.test(last)) return false;
  return words.length > 1 || !QUALIFIED_ONLY.test(last);
}

/** Credentials recognisable by their shape alone: JWTs, bearer/basic tokens, PEM private keys. */
const CREDENTIAL_SHAPES: ReadonlyArray<{ pattern: RegExp; secret: (m: RegExpMatchArray) => string; masked: (m: RegExpMatchArray) => string }> = [
  { pattern: /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, secret: (m) => m[0], masked: () => MASK },
  { pattern: /\b(Bearer|Basic)\s+(?!<masked>)([A-Za-z0-9._~+/=-]{8,})/g, secret: (m) => m[2]!, masked: (m) => `${m[1]} ${MASK}` },
  {
    pattern: /(-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----)([\s\S]*?)(-----END \2PRIVATE KEY-----)/g,
    secret: (m) => m[3]!.trim(),
    masked: (m) => `${m[1]}\n${MASK}\n${m[4]}`,
  },
];

/** `name=value`, `name: value`, `"name":"value"` or `name value`; the name is checked with isCredentialName. */
const NAMED_VALUE = /(?<![\w.-])([A-Za-z][\w.-]*)(["']?[ \t]*[=:][ \t]*["']?|[ \t]+)(?!<masked>)([^\s"',;]{4,})/g;

/** After a bare space (`token abc`) a value counts only when it looks generated: 8 characters or more, a digit among them. */
function looksGenerated(value: string): boolean {
  return value.length >= 8 && /\d/.test(value);
}

interface TextCredential {
  start: number;
  end: number;
  secret: string;
  masked: string;
}

/** Where free text holds credentials: URL passwords, JWTs, bearer tokens, private keys, values named like credentials. */
function findTextCredentials(text: string): TextCredential[] {
  const found: TextCredential[] = [];
  for (const m of text.matchAll(URL_CREDENTIAL)) found.push({ start: m.index!, end: m.index! + m[0].length, secret: m[2]!, masked: `${m[1]}:${MASK}@` });
  for (const shape of CREDENTIAL_SHAPES) {
    for (const m of text.matchAll(shape.pattern)) found.push({ start: m.index!, end: m.index! + m[0].length, secret: shape.secret(m), masked: shape.masked(m) });
  }
  // Scanned name by name: a value that is not a credential may be the name of the next pair (`use token x1y2z3w4`).
  const named = new RegExp(NAMED_VALUE.source, "g");
  for (let m = named.exec(text); m; m = named.exec(text)) {
    const [whole, name, sep, value] = m as unknown as [string, string, string, string];
    if (isCredentialName(name) && (/[=:]/.test(sep) || looksGenerated(value))) {
      found.push({ start: m.index, end: m.index + whole.length, secret: value, masked: `${name}${sep}${MASK}` });
    } else {
      named.lastIndex = m.index + name.length;
    }
  }
  // Earliest first; of overlapping findings the first (longest at equal start) wins.
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: TextCredential[] = [];
  for (const f of found) if (!kept.length || f.start >= kept[kept.length - 1]!.end) kept.push(f);
  return kept;
}

/** A text with every credential findTextCredentials recognises masked. */
export function maskCredentialsInText(text: string): string {
  let out = "";
  let at = 0;
  for (const f of findTextCredentials(text)) {
    out += text.slice(at, f.start) + f.masked;
    at = f.end;
  }
  return out + text.slice(at);
}

/** The credentials free text holds (the values maskCredentialsInText masks), to look for elsewhere. */
export function credentialsInText(text: string): string[] {
  return findTextCredentials(text).map((f) => f.secret);
}
