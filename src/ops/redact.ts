// Keeping credentials out of what the operations write: scrubbing known credentials, stripping copies in metadata.
import { load } from "js-yaml";
import type { KubeObject } from "../kube/object.js";
import {
  credentialsDeep,
  credentialsInText,
  isCredentialEnvName,
  MASK,
  maskCredentialsDeep,
  maskCredentialsInText,
  valuesCredentials,
} from "../model/secrets.js";
import { CONFIG_KEY } from "../render/secrets.js";

/**
 * Shortest credential searched for in text. Shorter values (`true`, `admin`, `5432`) would mask ordinary words all
 * over a bundle; they are still masked wherever the structure says where they are (fields, env, `password=`).
 */
const MIN_SECRET_LENGTH = 6;

/** Keys of typed Secrets that hold public data, not credentials (Kubernetes' own Secret types). */
const PUBLIC_KEYS: Record<string, readonly string[]> = {
  "kubernetes.io/tls": ["tls.crt", "ca.crt"],
  "kubernetes.io/service-account-token": ["ca.crt", "namespace"],
  "kubernetes.io/basic-auth": ["username"],
};

/** Fields of a kubeconfig user entry that are credentials. */
const KUBECONFIG_USER_CREDENTIALS = ["token", "password", "client-certificate-data", "client-key-data"];

/** Replaces every occurrence of the given credentials (and their base64 forms) with `<masked>`. */
export class Scrubber {
  private readonly needles = new Set<string>();
  private sorted: string[] = [];

  /** Adds one credential (and its base64 form). */
  add(value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_LENGTH) return;
    this.needles.add(value);
    this.needles.add(Buffer.from(value).toString("base64"));
    // Longest first, so that a value containing another is masked whole.
    this.sorted = [...this.needles].sort((a, b) => b.length - a.length);
  }

  /** Adds the credentials of a Secret (credentialsOfSecret); the rest of its data is not searched for. */
  addSecret(secret: { type?: string; data?: Record<string, string> }): void {
    for (const c of credentialsOfSecret(secret)) this.add(c);
  }

  get size(): number {
    return this.sorted.length;
  }

  /**
   * Masks the known credentials; with `heuristics` (free text such as logs) also anything that looks like one
   * (maskCredentialsInText). Structured output is sanitized field by field instead (sanitize()).
   */
  scrub(text: string, heuristics = false): string {
    let out = text;
    for (const n of this.sorted) if (out.includes(n)) out = out.split(n).join(MASK);
    return heuristics ? maskCredentialsInText(out) : out;
  }
}

/**
 * The credentials a Secret holds, as they may show up in a log: each value, except what is public by the Secret's
 * type (a TLS certificate, a service account's namespace); of a kubeconfig only its users' tokens, passwords,
 * certificates and keys; of vc's values file only what the values rule calls credentials (model/secrets.ts).
 * Another value counts whole, plus the credentials the free-text rule finds inside it (a DSN's password, a
 * `.env` line), and the lines of a PEM key.
 */
export function credentialsOfSecret(secret: { type?: string; data?: Record<string, string> }): string[] {
  const out: string[] = [];
  const publicKeys = PUBLIC_KEYS[secret.type ?? ""] ?? [];
  for (const [key, encoded] of Object.entries(secret.data ?? {})) {
    if (publicKeys.includes(key) || typeof encoded !== "string") continue;
    const value = Buffer.from(encoded, "base64").toString("utf8");
    const doc = parseDocument(value);
    if (key === CONFIG_KEY && isObject(doc) && "controlPlane" in doc) {
      out.push(...valuesCredentials(doc));
    } else if (isKubeconfig(doc)) {
      out.push(...kubeconfigCredentials(doc));
    } else {
      out.push(value, ...withPemLines(value).slice(1));
      out.push(...credentialsInText(value).filter((c) => !/^[a-z-]+$/.test(c)));
    }
  }
  return [...new Set(out)];
}

function kubeconfigCredentials(doc: { users: unknown[] }): string[] {
  const out: string[] = [];
  for (const entry of doc.users) {
    const user = isObject(entry) && isObject(entry.user) ? entry.user : {};
    for (const field of KUBECONFIG_USER_CREDENTIALS) {
      const v = user[field];
      if (typeof v !== "string") continue;
      out.push(v);
      // *-data fields are base64 of PEM: the PEM text and its lines may be logged too.
      if (field.endsWith("-data")) out.push(...withPemLines(Buffer.from(v, "base64").toString("utf8")));
    }
    const provider =
      isObject(user["auth-provider"]) && isObject(user["auth-provider"].config) ? user["auth-provider"].config : {};
    for (const [k, v] of Object.entries(provider)) if (typeof v === "string" && isCredentialEnvName(k)) out.push(v);
  }
  return out;
}

/** A PEM text and each line of its base64 body; any other text as it is. */
function withPemLines(text: string): string[] {
  if (!text.includes("-----BEGIN ")) return [];
  return [text, ...text.split(/\r?\n/).filter((l) => l.length >= 16 && !l.startsWith("-----"))];
}

function parseDocument(text: string): unknown {
  try {
    return load(text, { maxAliases: 100 });
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isKubeconfig(doc: unknown): doc is { users: unknown[] } {
  return isObject(doc) && Array.isArray(doc.users) && (doc.kind === "Config" || Array.isArray(doc.clusters));
}

/**
 * The credentials literal in an object (what sanitize masks in it: env values, annotations, flag arguments, credential
 * shapes in any string).
 */
export function credentialsOfObject(obj: KubeObject): string[] {
  return credentialsDeep(withoutDropped(obj));
}

const DROP_ANNOTATIONS = ["kubectl.kubernetes.io/last-applied-configuration"];

function withoutDropped(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj);
  delete copy.metadata.managedFields;
  if (copy.metadata.annotations) {
    for (const a of DROP_ANNOTATIONS) delete copy.metadata.annotations[a];
  }
  if (copy.kind === "Secret") {
    for (const field of ["data", "stringData"]) {
      const m = copy[field] as Record<string, string> | undefined;
      if (m) for (const k of Object.keys(m)) m[k] = MASK;
    }
  }
  return copy;
}

/**
 * A copy of an object for output: no managedFields, no last-applied copies, Secret data masked, and every credential
 * the one rule finds (maskCredentialsDeep: every string field by the free-text rule, env values, annotations and
 * flag arguments named like credentials) masked.
 */
export function sanitize(obj: KubeObject): KubeObject {
  return maskCredentialsDeep(withoutDropped(obj)) as KubeObject;
}
