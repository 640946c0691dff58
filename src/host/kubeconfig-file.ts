// Reading and editing the user's kubeconfig file as kubectl does: which file, entries by name, current context.
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { dump, load } from "js-yaml";
import { PREFIX } from "../translate/keys.js";

export interface NamedEntry {
  name: string;
  [key: string]: unknown;
}

/** A kubeconfig as plain data: unknown fields are kept as they are when it is written back. */
export interface KubeconfigDoc {
  apiVersion?: string;
  kind?: string;
  clusters?: NamedEntry[];
  users?: NamedEntry[];
  contexts?: NamedEntry[];
  "current-context"?: string;
  preferences?: unknown;
  [key: string]: unknown;
}

/** The file kubectl would write: `--kubeconfig`, else the first entry of KUBECONFIG, else ~/.kube/config. */
export function userKubeconfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return explicit;
  const first = (env.KUBECONFIG ?? "").split(delimiter).find((p) => p.trim() !== "");
  return first ?? join(homedir(), ".kube", "config");
}

/** Where client-node reads a service account's token when running inside a cluster. */
const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Why no kubeconfig can be found, or undefined when one can: without `--kubeconfig`, KUBECONFIG, ~/.kube/config or
 * an in-cluster service account, client-node would fall back to http://localhost:8080 and fail seconds later with
 * a bare ECONNREFUSED; this says what is missing and how to fix it instead.
 */
export function missingKubeconfig(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
  tokenPath: string = IN_CLUSTER_TOKEN,
): string | undefined {
  if (explicit) return existsSync(explicit) ? undefined : `kubeconfig ${explicit} (--kubeconfig) does not exist`;
  if ((env.KUBECONFIG ?? "").split(delimiter).some((p) => p.trim() !== "")) return undefined;
  const file = join(home, ".kube", "config");
  if (existsSync(file) || existsSync(tokenPath)) return undefined;
  return (
    `no kubeconfig found: KUBECONFIG is not set, ${file} does not exist and vc is not running in a cluster. ` +
    "Pass --kubeconfig FILE (and --context NAME), set KUBECONFIG, or create " +
    file +
    ' (for example with your provider\'s "get-credentials" command)'
  );
}

export function parseKubeconfig(text: string, source: string): KubeconfigDoc {
  if (text.trim() === "") return {};
  let doc: unknown;
  try {
    doc = load(text, { maxAliases: 100 });
  } catch (err) {
    throw new Error(`${source} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new Error(`${source} is not a kubeconfig (expected a mapping)`);
  return doc as KubeconfigDoc;
}

export function readKubeconfigFile(path: string): KubeconfigDoc {
  if (!existsSync(path)) return {};
  return parseKubeconfig(readFileSync(path, "utf8"), path);
}

/** Writes the file atomically with owner-only permissions (it holds credentials). */
export function writeKubeconfigFile(path: string, doc: KubeconfigDoc): void {
  // A symlinked kubeconfig stays a symlink: the file it points at is the one replaced.
  const target = existsSync(path) ? realpathSync(path) : path;
  mkdirSync(dirname(target), { recursive: true });
  const full: KubeconfigDoc = { apiVersion: "v1", kind: "Config", preferences: {}, ...doc };
  const tmp = `${target}.vc-tmp-${process.pid}`;
  writeFileSync(tmp, dump(full, { noRefs: true, lineWidth: -1 }), { mode: 0o600 });
  renameSync(tmp, target);
}

type Section = "clusters" | "users" | "contexts";

export function findEntry(doc: KubeconfigDoc, section: Section, name: string | undefined): NamedEntry | undefined {
  if (name === undefined) return undefined;
  return (doc[section] ?? []).find((e) => e.name === name);
}

/** Adds or replaces the entry of that name. */
export function upsertEntry(doc: KubeconfigDoc, section: Section, entry: NamedEntry): void {
  const list = (doc[section] ??= []);
  const i = list.findIndex((e) => e.name === entry.name);
  if (i >= 0) list[i] = entry;
  else list.push(entry);
}

export function removeEntry(doc: KubeconfigDoc, section: Section, name: string): boolean {
  const list = doc[section] ?? [];
  const i = list.findIndex((e) => e.name === name);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

/** The extension vc keeps on a context it created, to know where `vc disconnect` returns. */
export const CONNECT_EXTENSION = `${PREFIX}/connect`;

export interface ConnectRecord {
  /** The context that was current before `vc connect`; empty when there was none. */
  previousContext: string;
  cluster: string;
  namespace: string;
}

export function connectRecordOf(context: NamedEntry | undefined): ConnectRecord | undefined {
  const body = context?.context as { extensions?: Array<{ name?: string; extension?: unknown }> } | undefined;
  const ext = body?.extensions?.find((e) => e.name === CONNECT_EXTENSION)?.extension as
    | Partial<ConnectRecord>
    | undefined;
  if (!ext || typeof ext.cluster !== "string") return undefined;
  return {
    previousContext: String(ext.previousContext ?? ""),
    cluster: ext.cluster,
    namespace: String(ext.namespace ?? ""),
  };
}

/**
 * The host context when none is named: while the current context is a virtual cluster's, made by `vc connect`,
 * the context it was made from, so that every vc command keeps talking to the host; else undefined (the
 * current context is the host). Any problem reading the file also gives undefined: the caller's loader reports it.
 */
export function hostContextOf(kubeconfig?: string): string | undefined {
  try {
    const doc = readKubeconfigFile(userKubeconfigPath(kubeconfig));
    return connectRecordOf(findEntry(doc, "contexts", doc["current-context"]))?.previousContext || undefined;
  } catch {
    return undefined;
  }
}
