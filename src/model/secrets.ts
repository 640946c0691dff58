// Which values of a cluster's configuration are credentials, and how a masked value is shown: one rule for every output.
import type { Values } from "./values.js";

/** What a secret value is replaced with, in diffs, messages, descriptions and debug bundles. */
export const MASK = "<masked>";

/** The words that make a name a credential's name: every rule below that looks at names derives from this list. */
const CREDENTIAL_WORDS = [
  "pass(?:word|wd|phrase)?",
  "secret",
  "token",
  "key",
  "credential",
  "private",
  "auth",
  "endpoint",
  "dsn",
];

/**
 * Abbreviations that name a credential as a whole word only (`DB_PWD`, `MYSQL_PW`, `JWT`, `SESSION_COOKIE_SIG`,
 * `sig=` in a signed URL): inside a word they would match `SIGNAL`, `DESIGN` or `UPWARD`.
 */
const CREDENTIAL_ABBREVIATIONS = ["pwd", "pw", "sig", "signature", "jwt", "hmac", "otp", "creds?"];

/** Env var names whose literal values are credentials (`*PASSWORD*`, `*TOKEN*`, `*SECRET*`, `*KEY*`, `*ENDPOINT*`, `*DSN*`, ...). */
export const SECRET_ENV_NAME = new RegExp(`(${CREDENTIAL_WORDS.join("|")})`, "i");

/** The last word of a key in free text that names a credential (`DB_PASSWORD`, `apiToken`, `x-auth-token`, `PGPASSWORD`, `DB_PWD`). */
const CREDENTIAL_LAST_WORD = new RegExp(
  `(?:${CREDENTIAL_WORDS.join("|")})s?$|^(?:${CREDENTIAL_ABBREVIATIONS.join("|")})$`,
  "i",
);

/** True when an env entry's name makes its literal value a credential: SECRET_ENV_NAME anywhere in it, or a credential name by its last word (`DB_PWD`, `JWT`). */
export function isCredentialEnvName(name: string): boolean {
  return SECRET_ENV_NAME.test(name) || isCredentialName(name);
}

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
    return typeof name !== "string" || isCredentialEnvName(name);
  }
  return false;
}

/** The credentials of a values document (what maskValues masks): the values at isSecretValuesPath, and URL passwords. */
export function valuesCredentials(root: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: Array<string | number>): void => {
    if (typeof node === "string") {
      if (node !== "" && isSecretValuesPath(root, path)) out.push(node);
      out.push(...credentialsInText(node));
    } else if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i]));
    else if (node !== null && typeof node === "object")
      for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(root, []);
  return out;
}

/** A copy of effective values with every credential (isSecretValuesPath, and whatever maskCredentialsDeep finds) masked. */
export function maskValues(values: Values): Values {
  const copy = structuredClone(values);
  const ext = copy.controlPlane.backingStore.database.external;
  if (ext.endpoint) ext.endpoint = MASK;
  return maskCredentialsDeep(copy) as Values;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of path)
    node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[String(seg)] : undefined;
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

/** Credentials recognisable by their shape alone: JWTs, bearer/basic tokens, PEM private keys, the prefixes of well-known tokens. */
const CREDENTIAL_SHAPES: ReadonlyArray<{
  pattern: RegExp;
  secret: (m: RegExpMatchArray) => string;
  masked: (m: RegExpMatchArray, mask: string) => string;
}> = [
  {
    pattern: /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    secret: (m) => m[0],
    masked: (_m, mask) => mask,
  },
  {
    pattern: /\b(Bearer|Basic)\s+(?!<masked)([A-Za-z0-9._~+/=-]{8,})/g,
    secret: (m) => m[2]!,
    masked: (m, mask) => `${m[1]} ${mask}`,
  },
  {
    pattern: /(-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----)([\s\S]*?)(-----END \2PRIVATE KEY\3-----)/g,
    secret: (m) => m[4]!.trim(),
    masked: (m, mask) => `${m[1]}\n${mask}\n${m[5]}`,
  },
  { pattern: TOKEN_PREFIXES(), secret: (m) => m[0], masked: (_m, mask) => mask },
];

/**
 * Tokens whose prefix names their issuer: AWS access keys (AKIA, ASIA), GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
 * github_pat_), GitLab (glpat-), Slack (xoxb-, xoxp-, ...), Stripe (sk_live_, rk_live_, ...), Google API keys
 * (AIza), npm (npm_), Vault (hvs., hvb.), SendGrid (SG.), OpenAI/Anthropic style (sk-...).
 */
function TOKEN_PREFIXES(): RegExp {
  return new RegExp(
    [
      String.raw`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`,
      String.raw`\bgh[pousr]_[A-Za-z0-9]{30,}`,
      String.raw`\bgithub_pat_[A-Za-z0-9_]{22,}`,
      String.raw`\bglpat-[A-Za-z0-9_-]{20,}`,
      String.raw`\bxox[abposr]-[A-Za-z0-9-]{10,}`,
      String.raw`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`,
      String.raw`\bAIza[0-9A-Za-z_-]{35}`,
      String.raw`\bnpm_[A-Za-z0-9]{36}`,
      String.raw`\bhv[bsr]\.[A-Za-z0-9_-]{20,}`,
      String.raw`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`,
      String.raw`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}`,
    ].join("|"),
    "g",
  );
}

/**
 * `name=value`, `name: value`, `"name":"value"`, `name value`, `--name=value` or `--name value`; the name is checked
 * with isCredentialName. A name right after `/` is part of a path or an image (`org/token:v1`), not a key.
 */
const NAMED_VALUE = /(?<![\w./-])(-{0,2}[A-Za-z][\w.-]*)(["']?[ \t]*[=:][ \t]*["']?|[ \t]+)(?!<masked)([^\s"',;]{4,})/g;

/** After a bare space (`token abc`) a value counts only when it looks generated: 8 characters or more, a digit among them. */
function looksGenerated(value: string): boolean {
  return value.length >= 8 && /\d/.test(value);
}

/** Values after a credential's name that are not credentials: references (`$(DB_PASSWORD)`, `${TOKEN}`), absolute file paths, booleans, another flag. */
function isReference(value: string): boolean {
  return (
    /^\$[({]/.test(value) ||
    /^\/[\w./-]*$/.test(value) ||
    /^(true|false|null|none)$/i.test(value) ||
    value.startsWith("-")
  );
}

interface TextCredential {
  start: number;
  end: number;
  secret: string;
  masked: (mask: string) => string;
}

/** Where free text holds credentials: URL passwords, JWTs, bearer tokens, private keys, known token prefixes, values named like credentials. */
function findTextCredentials(text: string, byName = true): TextCredential[] {
  const found: TextCredential[] = [];
  for (const m of text.matchAll(URL_CREDENTIAL))
    found.push({ start: m.index!, end: m.index! + m[0].length, secret: m[2]!, masked: (mask) => `${m[1]}:${mask}@` });
  for (const shape of CREDENTIAL_SHAPES) {
    for (const m of text.matchAll(shape.pattern))
      found.push({
        start: m.index!,
        end: m.index! + m[0].length,
        secret: shape.secret(m),
        masked: (mask) => shape.masked(m, mask),
      });
  }
  if (byName) findNamedCredentials(text, found);
  return earliestFirst(found);
}

/** Values after a credential's name (`token=abc123`), added to `found`. */
function findNamedCredentials(text: string, found: TextCredential[]): void {
  // Scanned name by name: a value that is not a credential may be the name of the next pair (`use token x1y2z3w4`).
  const named = new RegExp(NAMED_VALUE.source, "g");
  for (let m = named.exec(text); m; m = named.exec(text)) {
    const [whole, name, sep, value] = m as unknown as [string, string, string, string];
    const spaced = !/[=:]/.test(sep);
    if (
      isCredentialName(name) &&
      !isReference(value) &&
      (!spaced || looksGenerated(value) || (name.startsWith("-") && !/^[a-z]+$/.test(value)))
    ) {
      found.push({
        start: m.index,
        end: m.index + whole.length,
        secret: value,
        masked: (mask) => `${name}${sep}${mask}`,
      });
    } else {
      named.lastIndex = m.index + name.length;
    }
  }
}

/** Earliest first; of overlapping findings the first (longest at equal start) wins. */
function earliestFirst(found: TextCredential[]): TextCredential[] {
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: TextCredential[] = [];
  for (const f of found) if (!kept.length || f.start >= kept[kept.length - 1]!.end) kept.push(f);
  return kept;
}

/** A text with every credential findTextCredentials recognises replaced by `mask`. */
export function maskCredentialsInText(text: string, mask = MASK): string {
  return maskFound(text, findTextCredentials(text), mask);
}

/**
 * A text with the credentials recognisable by their shape alone masked (URL passwords, JWTs, bearer tokens, private
 * keys, known token prefixes): for messages that name keys as their subject (`"password": must be string`), where the
 * rule by name would mask the message's own words.
 */
export function maskShapedCredentials(text: string, mask = MASK): string {
  return maskFound(text, findTextCredentials(text, false), mask);
}

function maskFound(text: string, found: readonly TextCredential[], mask: string): string {
  let out = "";
  let at = 0;
  for (const f of found) {
    out += text.slice(at, f.start) + f.masked(mask);
    at = f.end;
  }
  return out + text.slice(at);
}

/** The credentials free text holds (the values maskCredentialsInText masks), to look for elsewhere. */
export function credentialsInText(text: string): string[] {
  return findTextCredentials(text).map((f) => f.secret);
}

// ---- credentials in structured objects: the free-text rule on every string, plus what the structure names ----

/** A lone flag whose next argument is its value (`--token`, `-password`), named like a credential. */
function isCredentialFlag(arg: unknown): boolean {
  return typeof arg === "string" && /^-{1,2}[A-Za-z][\w.-]*$/.test(arg) && isCredentialName(arg);
}

/** A map key naming a credential: the part after the last `/` of an annotation or label key (`vault.hashicorp.com/agent-inject-token`). */
function isCredentialKey(key: string): boolean {
  return isCredentialName(key.slice(key.lastIndexOf("/") + 1));
}

/**
 * A copy of a JSON-like value (a Kubernetes object, a values document) with every credential masked: in every string
 * the free-text rule (maskCredentialsInText); whole, the value of an env entry named like a credential
 * (isCredentialEnvName), of a map key named like one (annotations such as `...-inject-token`), and the argument after
 * a lone credential flag (`["--token", "x"]`). With a `twin` (the other side of a diff), a credential that differs
 * from the twin's but masks alike shows as `changed`, so a diff tells that a credential changed, never what it is.
 */
export function maskCredentialsDeep(node: unknown, twin?: unknown, changed = MASK, found?: string[]): unknown {
  const whole = (value: string, other: unknown): string => {
    if (value.startsWith("<masked")) return value;
    found?.push(value);
    return other === undefined || other === value ? MASK : changed;
  };
  if (typeof node === "string") {
    const masked = maskCredentialsInText(node);
    if (masked === node) return node;
    found?.push(...credentialsInText(node));
    const differs = typeof twin === "string" && twin !== node && maskCredentialsInText(twin) === masked;
    return differs ? maskCredentialsInText(node, changed) : masked;
  }
  if (Array.isArray(node)) {
    const twins = Array.isArray(twin) ? twin : [];
    return node.map((item, i) => {
      const named = isPlainRecord(item) && typeof item.name === "string";
      const other = named ? twins.find((t) => isPlainRecord(t) && t.name === item.name) : twins[i];
      if (typeof item === "string" && item !== "" && !item.startsWith("-") && i > 0 && isCredentialFlag(node[i - 1]))
        return whole(item, other);
      if (named && typeof item.value === "string" && item.value !== "" && isCredentialEnvName(item.name as string)) {
        const rest = maskCredentialsDeep({ ...item, value: "" }, other, changed, found) as Record<string, unknown>;
        return { ...rest, value: whole(item.value, isPlainRecord(other) ? other.value : undefined) };
      }
      return maskCredentialsDeep(item, other, changed, found);
    });
  }
  if (isPlainRecord(node)) {
    const other = isPlainRecord(twin) ? twin : {};
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        typeof v === "string" && v !== "" && isCredentialKey(k)
          ? whole(v, other[k])
          : maskCredentialsDeep(v, other[k], changed, found),
      ]),
    );
  }
  return node;
}

/** The credentials maskCredentialsDeep would mask in a value, to look for elsewhere (a password logged alone). */
export function credentialsDeep(node: unknown): string[] {
  const found: string[] = [];
  maskCredentialsDeep(node, undefined, MASK, found);
  return [...new Set(found)];
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
