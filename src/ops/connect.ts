// `vc connect` / `vc disconnect`: a context for the virtual cluster in the user's kubeconfig, and the way back.
import { dump } from "js-yaml";
import type { Host } from "./host.js";
import { P } from "./paths.js";
import { kubeconfigSecretName } from "./cluster-ref.js";
import { certInfo, type CertInfo } from "./cert.js";
import { safeEntries, UnsafeKubeconfigError } from "../host/inline-kubeconfig.js";
import {
  CONNECT_EXTENSION,
  connectRecordOf,
  findEntry,
  parseKubeconfig,
  readKubeconfigFile,
  removeEntry,
  upsertEntry,
  writeKubeconfigFile,
  type KubeconfigDoc,
  type NamedEntry,
} from "../host/kubeconfig-file.js";

/** The secret key holding the virtual cluster's kubeconfig. */
const KUBECONFIG_SECRET_KEY = "config";

export class ConnectError extends Error {}

export interface ConnectOptions {
  name: string;
  namespace: string;
  /** The user's kubeconfig file to edit. */
  kubeconfigPath: string;
  /** Replace the server address of the virtual cluster's kubeconfig (e.g. a port-forward or ingress URL). */
  server?: string;
  /** Name of the new context; default `vc_<name>_<namespace>_<host context>`. */
  contextName?: string;
  /** Called with each step, for --debug. */
  log?: (line: string) => void;
}

interface VirtualKubeconfig {
  cluster: Record<string, unknown>;
  user: Record<string, unknown>;
  namespace?: string;
}

/** Reads and parses the kubeconfig in host secret `vc-<name>` (key `config`). */
export async function readVirtualKubeconfig(
  host: Host,
  name: string,
  namespace: string,
  log = (_: string) => {},
): Promise<KubeconfigDoc> {
  const secretName = kubeconfigSecretName(name);
  log(
    `reading secret ${namespace}/${secretName} key "${KUBECONFIG_SECRET_KEY}" through host context ` +
      `"${host.contextName}"`,
  );
  const secret = await host.get<{ data?: Record<string, string> }>(P.secrets(namespace, secretName));
  if (!secret) {
    throw new ConnectError(
      `secret ${secretName} not found in namespace ${namespace}: is the virtual cluster "${name}" running there? ` +
        `(check with vc list, or pass --namespace)`,
    );
  }
  const encoded = secret.data?.[KUBECONFIG_SECRET_KEY];
  if (!encoded)
    throw new ConnectError(
      `secret ${namespace}/${secretName} has no key "${KUBECONFIG_SECRET_KEY}": the control plane has not written ` +
        `its kubeconfig yet`,
    );
  const source = `secret ${namespace}/${secretName}`;
  const doc = parseKubeconfig(Buffer.from(encoded, "base64").toString("utf8"), source);
  // The syncer may write this Secret: nothing in it that runs a program or reads a file gets past here.
  pickContext(doc, source);
  return doc;
}

/**
 * The cluster and user of a kubeconfig's current (or only) context, once host/inline-kubeconfig.ts accepted them
 * (inline credentials only): what vc copies into a kubeconfig or builds a client from can never carry an exec plugin,
 * an auth provider or a file reference.
 */
function pickContext(doc: KubeconfigDoc, source: string): VirtualKubeconfig {
  try {
    return safeEntries(doc, source);
  } catch (err) {
    if (err instanceof UnsafeKubeconfigError) throw new ConnectError(`${err.message}; your kubeconfig was not changed`);
    throw err;
  }
}

/** The client certificate of a user entry, if it has one inline. */
export function userCertificate(
  user: Record<string, unknown>,
  log: (line: string) => void = () => {},
): CertInfo | undefined {
  const data = user["client-certificate-data"];
  if (typeof data !== "string" || data === "") return undefined;
  try {
    return certInfo(Buffer.from(data, "base64"));
  } catch (err) {
    // An unreadable certificate is the server's to judge; connecting still works or fails on its own.
    log(`cannot read the client certificate to show its expiry: ${(err as Error).message}`);
    return undefined;
  }
}

/** The virtual cluster's kubeconfig, standalone, as `--print` writes it (server replaced when asked). */
export function standaloneKubeconfig(doc: KubeconfigDoc, name: string, server?: string): KubeconfigDoc {
  const v = pickContext(doc, "the virtual cluster's kubeconfig");
  if (server) v.cluster.server = server;
  const ctx: Record<string, unknown> = { cluster: name, user: name };
  if (v.namespace) ctx.namespace = v.namespace;
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: v.cluster }],
    users: [{ name, user: v.user }],
    contexts: [{ name, context: ctx }],
    "current-context": name,
  };
}

export function printKubeconfig(doc: KubeconfigDoc): string {
  return dump(doc, { noRefs: true, lineWidth: -1 });
}

export interface ConnectResult {
  context: string;
  previousContext: string;
  server: string;
  certificate?: CertInfo;
}

/** Adds (or refreshes) the context of the virtual cluster in the user's kubeconfig and makes it current. */
export function addContext(virtual: KubeconfigDoc, hostContext: string, options: ConnectOptions): ConnectResult {
  const log = options.log ?? (() => {});
  const v = pickContext(virtual, "the virtual cluster's kubeconfig");
  if (options.server) {
    log(`server ${String(v.cluster.server)} replaced by ${options.server}`);
    v.cluster.server = options.server;
  }
  const context = options.contextName ?? `vc_${options.name}_${options.namespace}_${hostContext}`;
  log(`editing ${options.kubeconfigPath}: cluster, user and context "${context}"`);
  const doc = readKubeconfigFile(options.kubeconfigPath);
  const current = doc["current-context"] ?? "";
  // Connecting from one virtual cluster to another keeps the way back to the host context.
  const currentRecord = connectRecordOf(findEntry(doc, "contexts", current));
  const previousContext =
    current === context
      ? (currentRecord?.previousContext ?? "")
      : currentRecord
        ? currentRecord.previousContext
        : current;
  upsertEntry(doc, "clusters", { name: context, cluster: v.cluster });
  upsertEntry(doc, "users", { name: context, user: v.user });
  const ctxBody: Record<string, unknown> = {
    cluster: context,
    user: context,
    extensions: [
      { name: CONNECT_EXTENSION, extension: { previousContext, cluster: options.name, namespace: options.namespace } },
    ],
  };
  if (v.namespace) ctxBody.namespace = v.namespace;
  upsertEntry(doc, "contexts", { name: context, context: ctxBody } as NamedEntry);
  doc["current-context"] = context;
  writeKubeconfigFile(options.kubeconfigPath, doc);
  log(`current context "${context}" (previous "${previousContext}")`);
  return {
    context,
    previousContext,
    server: String(v.cluster.server ?? ""),
    certificate: userCertificate(v.user, log),
  };
}

export interface DisconnectResult {
  /** The context that was current. */
  from: string;
  /** The context current now (empty: none). */
  to: string;
  /** Whether the current context was vc's and was switched back. */
  switched: boolean;
  /** The contexts vc had added (with their cluster and user entries) that were removed. */
  removed: string[];
}

/**
 * Switches back to the context that was current before `vc connect`, and removes every context vc connect added
 * (after connecting to two virtual clusters, or reconnecting under another name), with the cluster and user entries
 * it added for them, unless `keep`. A current context that is not vc's stays current; vc's entries still go.
 */
export function disconnect(kubeconfigPath: string, keep = false): DisconnectResult {
  const doc = readKubeconfigFile(kubeconfigPath);
  const current = doc["current-context"] ?? "";
  const record = connectRecordOf(findEntry(doc, "contexts", current));
  const ours = (doc.contexts ?? []).filter((c) => connectRecordOf(c) !== undefined).map((c) => c.name);
  if (!record && (keep || ours.length === 0)) {
    throw new ConnectError(
      current
        ? `the current context "${current}" in ${kubeconfigPath} was not made by vc connect: nothing to disconnect`
        : `${kubeconfigPath} has no current context: nothing to disconnect`,
    );
  }
  let to = current;
  if (record) {
    to = record.previousContext;
    if (to && !findEntry(doc, "contexts", to)) {
      throw new ConnectError(
        `the previous context "${to}" no longer exists in ${kubeconfigPath}: pick one with kubectl config use-context`,
      );
    }
    if (to) doc["current-context"] = to;
    else delete doc["current-context"];
  }
  const removed: string[] = [];
  if (!keep) {
    for (const name of ours) {
      // The way back is never removed (connecting from one virtual cluster to another keeps the host as the way back).
      if (name === to) continue;
      removeEntry(doc, "contexts", name);
      removed.push(name);
    }
    // vc names the cluster and user entries it adds after the context: remove those no remaining context uses.
    const stillUsed = (n: string, key: "cluster" | "user") =>
      (doc.contexts ?? []).some((c) => (c.context as Record<string, unknown> | undefined)?.[key] === n);
    for (const name of removed) {
      if (!stillUsed(name, "cluster")) removeEntry(doc, "clusters", name);
      if (!stillUsed(name, "user")) removeEntry(doc, "users", name);
    }
  }
  writeKubeconfigFile(kubeconfigPath, doc);
  return { from: current, to, switched: !!record, removed };
}
