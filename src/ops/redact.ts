// Keeping secret values out of what the operations write: scrubbing known values, stripping copies in metadata.
import type { KubeObject } from "../kube/object.js";
import { MASK, SECRET_ENV_NAME } from "../model/secrets.js";


/** Shortest value scrubbed from text (shorter ones would mask ordinary words). */
const MIN_SECRET_LENGTH = 4;
/** Shortest fragment of a structured secret value that is scrubbed on its own. */
const MIN_FRAGMENT_LENGTH = 12;

/**
 * Credentials recognisable without knowing them, for when the Secrets cannot be read: JWTs, bearer tokens,
 * passwords in URLs, and the word after password/token/secret/api key (`token: x`, `password=x`, `token x`).
 */
const CREDENTIAL_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${MASK}`],
  [/(:\/\/[^\s:@/]+:)[^\s@/]+@/g, `$1${MASK}@`],
  [/\b(pass(?:word|wd)?|pwd|token|secret|api[_-]?key|access[_-]?key)(["']?[ \t]*[=:][ \t]*["']?|[ \t]+)(?!<masked>)[^\s"',;]{4,}/gi, `$1$2${MASK}`],
];

/** Replaces every occurrence of the given secret values (and their base64 forms) with `<masked>`. */
export class Scrubber {
  private readonly needles: string[] = [];

  /**
   * Adds a secret value. A structured value (a kubeconfig, a DSN, a JSON document) also adds its long fragments
   * (split on whitespace, quotes, `:`, `=`, `@`, `/`, `,`; plain lower-case words such as YAML keys excepted), so that a token or key embedded in it is masked when
   * it appears alone.
   */
  add(value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_LENGTH) return;
    const candidates = [value, Buffer.from(value).toString("base64")];
    for (const part of value.split(/[\s"':=@/,{}[\]]+/)) if (part.length >= MIN_FRAGMENT_LENGTH && part !== value && !/^[a-z-]+$/.test(part)) candidates.push(part);
    for (const v of candidates) if (!this.needles.includes(v)) this.needles.push(v);
    // Longest first, so that a value containing another is masked whole.
    this.needles.sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.needles.length;
  }

  /**
   * Masks the known values; with `heuristics` (free text such as logs) also anything that looks like a
   * credential (CREDENTIAL_PATTERNS). Structured output is sanitized field by field instead (sanitize()).
   */
  scrub(text: string, heuristics = false): string {
    let out = text;
    for (const n of this.needles) if (out.includes(n)) out = out.split(n).join(MASK);
    if (heuristics) for (const [pattern, replacement] of CREDENTIAL_PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }
}

const DROP_ANNOTATIONS = ["kubectl.kubernetes.io/last-applied-configuration"];

/** A copy of an object for output: no managedFields, no last-applied copies, secret-looking env values masked. */
export function sanitize(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj);
  delete copy.metadata.managedFields;
  if (copy.metadata.annotations) {
    for (const a of DROP_ANNOTATIONS) delete copy.metadata.annotations[a];
  }
  maskEnv(copy);
  if (copy.kind === "Secret") {
    for (const field of ["data", "stringData"]) {
      const m = copy[field] as Record<string, string> | undefined;
      if (m) for (const k of Object.keys(m)) m[k] = MASK;
    }
  }
  return copy;
}

function maskEnv(node: unknown): void {
  if (Array.isArray(node)) {
    for (const x of node) maskEnv(x);
    return;
  }
  if (!node || typeof node !== "object") return;
  const rec = node as Record<string, unknown>;
  if (Array.isArray(rec.env)) {
    for (const e of rec.env as Array<{ name?: string; value?: string }>) {
      if (e && typeof e.value === "string" && e.name && SECRET_ENV_NAME.test(e.name)) e.value = MASK;
    }
  }
  for (const v of Object.values(rec)) maskEnv(v);
}
