// Which values of a cluster's configuration are credentials, and how a masked value is shown: one rule for every
// output.
import { rules } from "@secretlint/secretlint-rule-preset-recommend";
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
 * Abbreviations (and words) that name a credential as a whole word only (`DB_PWD`, `MYSQL_PW`, `JWT`,
 * `SESSION_COOKIE_SIG`, `sig=` in a signed URL, `session=…`, `cookie=…`): inside a word they would match `SIGNAL`,
 * `DESIGN` or `UPWARD`.
 */
const CREDENTIAL_ABBREVIATIONS = ["pwd", "pw", "sig", "signature", "jwt", "hmac", "otp", "creds?", "session", "cookie"];

/**
 * Env var names whose literal values are credentials (`*PASSWORD*`, `*TOKEN*`, `*SECRET*`, `*KEY*`, `*ENDPOINT*`,
 * `*DSN*`, ...).
 */
export const SECRET_ENV_NAME = new RegExp(`(${CREDENTIAL_WORDS.join("|")})`, "i");

/**
 * The last word of a key in free text that names a credential (`DB_PASSWORD`, `apiToken`, `x-auth-token`, `PGPASSWORD`,
 * `DB_PWD`).
 */
const CREDENTIAL_LAST_WORD = new RegExp(
  `(?:${CREDENTIAL_WORDS.join("|")})s?$|^(?:${CREDENTIAL_ABBREVIATIONS.join("|")})$`,
  "i",
);

/**
 * True when an env entry's name makes its literal value a credential: SECRET_ENV_NAME anywhere in it, or a credential
 * name by its last word (`DB_PWD`, `JWT`).
 */
export function isCredentialEnvName(name: string): boolean {
  return SECRET_ENV_NAME.test(name) || isCredentialName(name);
}

/**
 * Credential words that name a credential in free text only after another word (`apiKey`, `SECRET_KEY`,
 * `clientSecret`): alone (`key=ns/name`, `secret=vc-config`, `endpoint=10.0.0.1:443`) they name a queue key, an object
 * or an address in most logs.
 */
const QUALIFIED_ONLY = /^(keys?|secrets?|auth|endpoints?|private)$/i;

/** `scheme://user:password@`: the password of a URL's userinfo. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*):([^\s@/"']+)@/gi;

/** `scheme://token@`: a URL's userinfo without a password, a credential unless it reads as a plain user name. */
const URL_USER = /\b([a-z][a-z0-9+.-]*:\/\/)(?!<masked)([^\s:/@"'<>]+)@/gi;

/** A URL's user (no password) that is a credential: not a plain lower-case name such as `git` or `deploy-bot`. */
function isTokenUser(user: string): boolean {
  return !/^[a-z][a-z._-]{0,15}$/.test(user);
}

/** A text with the password of every `scheme://user:password@` URL in it, and a token given as its user, masked. */
export function maskUrlCredentials(text: string, mask = MASK): string {
  return text
    .replace(URL_CREDENTIAL, (_m, head: string) => `${head}:${mask}@`)
    .replace(URL_USER, (m, scheme: string, user: string) => (isTokenUser(user) ? `${scheme}${mask}@` : m));
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

/**
 * The credentials of a values document (what maskValues masks): the values at isSecretValuesPath, and URL passwords.
 */
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

/**
 * A copy of effective values with every credential (isSecretValuesPath, and whatever maskCredentialsDeep finds) masked.
 */
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

/**
 * True when a key names a credential: its last word (split at `_ - .` and lower-to-upper case) ends in a credential
 * word (QUALIFIED_ONLY ones need a word before).
 */
export function isCredentialName(name: string): boolean {
  const words = name.split(/[_.-]+|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean);
  // `private_key_id`, `AWS_ACCESS_KEY_ID`: the id of a key is read as the key.
  if (words.length > 2 && /^id$/i.test(words[words.length - 1]!)) words.pop();
  const last = words[words.length - 1];
  if (last === undefined || !CREDENTIAL_LAST_WORD.test(last)) return false;
  return words.length > 1 || !QUALIFIED_ONLY.test(last);
}

/**
 * A token whose prefix names its issuer, in the form issuers share (`dop_v1_…`, `npm_…`, `glpat-…`, `sk_live_…`,
 * `hvs.…`, `sk-proj-…`): a prefix of 2 to 10 letters, at most two short segments (`_v1`, `_live`, `-proj`), a separator
 * and a body of 16 letters and digits or more with both among them. Kubernetes names (`pvc-<uid>`,
 * `web-7d9f8c6b5-x2k4p`) have no such body: theirs are cut by dashes into shorter parts.
 */
const PREFIXED_TOKEN =
  /(?<![\w.-])[A-Za-z]{2,10}(?:[_-][A-Za-z0-9]{1,8}){0,2}[_.-](?=[A-Za-z_]*\d)(?=[0-9_]*[A-Za-z])[A-Za-z0-9_]{16,}(?![\w-])/g;

/**
 * Credentials recognisable by their shape alone, besides the kept rule set (secretlintSecrets): JWTs, bearer/basic
 * tokens, PEM private keys (their body only), HTTP cookie headers, and tokens whose prefix names their issuer.
 */
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
  {
    pattern: /\b((?:Set-)?Cookie:[ \t]*)(?!<masked)([^\r\n"]*[^\s"])/gi,
    secret: (m) => m[2]!,
    masked: (m, mask) => `${m[1]}${mask}`,
  },
  { pattern: PREFIXED_TOKEN, secret: (m) => m[0], masked: (_m, mask) => mask },
];

/** The rules of secretlint's recommended preset, each run as its `file` handler over one text (secretlintSecrets). */
interface SecretlintRule {
  meta: { id: string; type: string };
  messages?: unknown;
  create(
    context: {
      createTranslator: (messages: unknown) => (id: string, props?: unknown) => string;
      report: (d: { range: readonly [number, number] }) => void;
      ignore: () => void;
    },
    options: Record<string, unknown>,
  ): { file?: (source: SecretlintSource) => unknown };
}
interface SecretlintSource {
  content: string;
  filePath: string;
  ext: string;
  contentType: "text";
}

/** Ranges the kept rule set reported for the text being scanned (secretlintSecrets). */
let reported: Array<readonly [number, number]> = [];

/**
 * The scanners of secretlint's recommended preset (its comment filter aside: a text may not switch masking off), each
 * created once. AWS access key ids are scanned too; the npm rule reads every text as an `.npmrc` (`_authToken=`).
 */
const SECRETLINT = (rules as unknown as SecretlintRule[])
  .filter((r) => r.meta.type === "scanner" && !r.meta.id.endsWith("/secretlint-rule-filter-comments"))
  .map((r) =>
    r.create(
      {
        createTranslator: () => (id) => id,
        report: (d) => reported.push(d.range),
        ignore: () => undefined,
      },
      r.meta.id.endsWith("/secretlint-rule-aws") ? { enableIDScanRule: true } : {},
    ),
  );

/**
 * The credentials secretlint's recommended scanners find in a text, as the strings they are (synchronously: no scanner
 * here awaits). A scan costs about 40 µs whatever the text's length, so an object's strings are scanned together
 * (maskCredentialsDeep), not one by one.
 */
function secretlintSecrets(text: string): string[] {
  reported = [];
  const source: SecretlintSource = { content: text, filePath: "text.npmrc", ext: ".txt", contentType: "text" };
  for (const scanner of SECRETLINT) scanner.file?.(source);
  const found = reported.map(([start, end]) => text.slice(start, end)).filter((f) => f.length >= MIN_KNOWN);
  reported = [];
  return found;
}

/** Shortest credential looked for by its value (shorter findings would mask ordinary words). */
const MIN_KNOWN = 6;

/** Where known credentials (found by a scan of the text they came from) occur in a text. */
function knownIn(text: string, known: readonly string[]): TextCredential[] {
  const found: TextCredential[] = [];
  for (const secret of known) {
    for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + secret.length))
      found.push({ start: at, end: at + secret.length, secret, masked: (mask) => mask });
  }
  return found;
}

/**
 * `name=value`, `name: value`, `"name":"value"`, `name value`, `--name=value` or `--name value`; the name is checked
 * with isCredentialName. A name right after `/` is part of a path or an image (`org/token:v1`), not a key.
 */
const NAMED_VALUE =
  /(?<![\w./-])(-{0,2}_?[A-Za-z][\w.-]*)(["']?[ \t]*[=:][ \t]*["']?|[ \t]+)(?!<masked)([^\s"',;]{4,})/g;

/**
 * After a bare space (`token abc`) a value counts only when it looks generated: 8 characters or more, a digit among
 * them.
 */
function looksGenerated(value: string): boolean {
  return value.length >= 8 && /\d/.test(value);
}

/**
 * Values after a credential's name that are not credentials: references (`$(DB_PASSWORD)`, `${TOKEN}`), absolute file
 * paths, booleans, another flag.
 */
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

/** What a text needs for any rule of findTextCredentials to find something in it. */
const MAY_HOLD = /[=:\s]|\w{16}/;

/**
 * Where free text holds credentials: URL passwords and token users, JWTs, bearer tokens, private keys, cookie
 * headers, prefixed tokens, values named like credentials, and whatever secretlint's recommended preset finds.
 */
function findTextCredentials(
  text: string,
  byName = true,
  known: readonly string[] = secretlintSecrets(text),
): TextCredential[] {
  // Every rule below needs a separator (`=`, `:` or a space) or a token of 16 word characters: a name, a label value or
  // a path without either is looked at for the known credentials only.
  if (!MAY_HOLD.test(text)) return known.length === 0 ? [] : earliestFirst(knownIn(text, known));
  const found: TextCredential[] = [];
  for (const m of text.matchAll(URL_CREDENTIAL))
    found.push({ start: m.index!, end: m.index! + m[0].length, secret: m[2]!, masked: (mask) => `${m[1]}:${mask}@` });
  for (const m of text.matchAll(URL_USER))
    if (isTokenUser(m[2]!))
      found.push({ start: m.index!, end: m.index! + m[0].length, secret: m[2]!, masked: (mask) => `${m[1]}${mask}@` });
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
  // The kept rule set's findings where none of the rules above found one (theirs mask less of the text around it).
  for (const f of knownIn(text, known)) if (!found.some((o) => o.start < f.end && f.start < o.end)) found.push(f);
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

/**
 * A map key naming a credential: the part after the last `/` of an annotation or label key
 * (`vault.hashicorp.com/agent-inject-token`).
 */
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
  const known = new Set(secretlintSecrets(stringsOf(node)));
  if (twin !== undefined) for (const k of secretlintSecrets(stringsOf(twin))) known.add(k);
  return maskDeep(node, twin, changed, found, [...known]);
}

/** Every string of a JSON-like value, one per line: what an object's scan by the kept rule set reads. */
function stringsOf(node: unknown): string {
  const out: string[] = [];
  const walk = (n: unknown): void => {
    if (typeof n === "string") out.push(n);
    else if (Array.isArray(n)) for (const item of n) walk(item);
    else if (isPlainRecord(n)) for (const v of Object.values(n)) walk(v);
  };
  walk(node);
  return out.join("\n\n");
}

/** maskCredentialsDeep with the credentials the kept rule set found in the value and its twin (`known`). */
function maskDeep(
  node: unknown,
  twin: unknown,
  changed: string,
  found: string[] | undefined,
  known: string[],
): unknown {
  const whole = (value: string, other: unknown): string => {
    if (value.startsWith("<masked")) return value;
    found?.push(value);
    return other === undefined || other === value ? MASK : changed;
  };
  if (typeof node === "string") {
    const credentials = findTextCredentials(node, true, known);
    if (credentials.length === 0) return node;
    const masked = maskFound(node, credentials, MASK);
    found?.push(...credentials.map((c) => c.secret));
    const differs =
      typeof twin === "string" &&
      twin !== node &&
      maskFound(twin, findTextCredentials(twin, true, known), MASK) === masked;
    return differs ? maskFound(node, credentials, changed) : masked;
  }
  if (Array.isArray(node)) {
    const twins = Array.isArray(twin) ? twin : [];
    return node.map((item, i) => {
      const named = isPlainRecord(item) && typeof item.name === "string";
      const other = named ? twins.find((t) => isPlainRecord(t) && t.name === item.name) : twins[i];
      if (typeof item === "string" && item !== "" && !item.startsWith("-") && i > 0 && isCredentialFlag(node[i - 1]))
        return whole(item, other);
      if (named && typeof item.value === "string" && item.value !== "" && isCredentialEnvName(item.name as string)) {
        const rest = maskDeep({ ...item, value: "" }, other, changed, found, known) as Record<string, unknown>;
        return { ...rest, value: whole(item.value, isPlainRecord(other) ? other.value : undefined) };
      }
      return maskDeep(item, other, changed, found, known);
    });
  }
  if (isPlainRecord(node)) {
    const other = isPlainRecord(twin) ? twin : {};
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        typeof v === "string" && v !== "" && isCredentialKey(k)
          ? whole(v, other[k])
          : maskDeep(v, other[k], changed, found, known),
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
