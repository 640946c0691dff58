// What a kubeconfig read from a host Secret may hold before vc builds a client from it or copies it into the user's
// kubeconfig: inline credentials only.
//
// The Secret `vc-<name>` lives in the tenant's host namespace, where its syncer ServiceAccount may write Secrets; vc
// connect reads it, and the metrics proxy mounts it. An `exec` or `auth-provider` user would run a program on the
// operator's machine (or in the proxy), and a file reference
// (`client-certificate`, `client-key`, `tokenFile`, `certificate-authority`) would read one; neither may reach
// client-node. Anything not on these lists is refused, so a field client-node learns later cannot slip through.
import type { KubeconfigDoc } from "./kubeconfig-file.js";
import { escapeControls } from "../model/escape.js";

/** The fields of a user entry vc accepts: a client certificate and key given inline, or a bearer token. */
const USER_FIELDS = new Set(["client-certificate-data", "client-key-data", "token"]);
/** The fields of a cluster entry vc accepts: an address and inline trust settings. */
const CLUSTER_FIELDS = new Set(["server", "certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name"]);
/** The fields of a context entry vc reads. */
const CONTEXT_FIELDS = new Set(["cluster", "user", "namespace"]);

/** What the named fields do, for the message. */
const WHY: Record<string, string> = {
  exec: "runs a program",
  "auth-provider": "runs an authentication plugin",
  "client-certificate": "reads a local file",
  "client-key": "reads a local file",
  tokenFile: "reads a local file",
  "token-file": "reads a local file",
  "certificate-authority": "reads a local file",
};

export class UnsafeKubeconfigError extends Error {}

export interface SafeEntries {
  cluster: Record<string, unknown>;
  user: Record<string, unknown>;
  namespace?: string;
}

/**
 * Checks the cluster, user and context a kubeconfig's current (or only) context names, and returns copies of them.
 * Throws UnsafeKubeconfigError naming `source` (e.g. `secret vc-team-a/vc-team-a`) and every refused field; a user
 * entry must carry a token or an inline certificate and key.
 */
export function safeEntries(doc: KubeconfigDoc, source: string): SafeEntries {
  const ctxName = doc["current-context"] || doc.contexts?.[0]?.name;
  const ctx = entry(doc.contexts, ctxName)?.context;
  const ctxBody = asRecord(ctx);
  const cluster = asRecord(entry(doc.clusters, ctxBody?.cluster)?.cluster);
  const user = asRecord(entry(doc.users, ctxBody?.user)?.user);
  if (!ctxBody || !cluster || !user)
    throw new UnsafeKubeconfigError(`${source} has no usable context (a context naming an existing cluster and user)`);
  const refused = [
    ...unknownFields(user, USER_FIELDS, "user"),
    ...unknownFields(cluster, CLUSTER_FIELDS, "cluster"),
    ...unknownFields(ctxBody, CONTEXT_FIELDS, "context"),
  ];
  for (const [key, value] of Object.entries({ ...user, ...cluster })) {
    if (!USER_FIELDS.has(key) && !CLUSTER_FIELDS.has(key)) continue;
    if (key === "insecure-skip-tls-verify" ? typeof value !== "boolean" : typeof value !== "string")
      refused.push(`${key} (not a ${key === "insecure-skip-tls-verify" ? "boolean" : "string"})`);
  }
  if (ctxBody.namespace !== undefined && typeof ctxBody.namespace !== "string")
    refused.push("context.namespace (not a string)");
  if (refused.length) {
    throw new UnsafeKubeconfigError(
      `${source} holds a kubeconfig vc will not use: ${refused.join(", ")}. vc accepts only a token or an inline ` +
        `client certificate and key ` +
        `(client-certificate-data, client-key-data) and never runs a program or reads a file a host Secret names: ` +
        `nothing was run. ` +
        `The control plane writes it; something else in the namespace may have rewritten it: check who did ` +
        `(kubectl get secret --show-managed-fields)`,
    );
  }
  const hasCert = typeof user["client-certificate-data"] === "string" && typeof user["client-key-data"] === "string";
  if (!hasCert && typeof user.token !== "string") {
    throw new UnsafeKubeconfigError(
      `${source} holds a kubeconfig whose user has neither a token nor an inline client certificate and key: vc ` +
        `connect needs one of them`,
    );
  }
  if (typeof cluster.server !== "string" || !/^https?:\/\//.test(cluster.server)) {
    throw new UnsafeKubeconfigError(`${source} holds a kubeconfig without an http(s) server address`);
  }
  return { cluster: { ...cluster }, user: { ...user }, namespace: ctxBody.namespace as string | undefined };
}

function unknownFields(body: Record<string, unknown>, allowed: Set<string>, kind: string): string[] {
  return Object.keys(body)
    .filter((k) => !allowed.has(k))
    .sort()
    .map((k) => `${kind}.${escapeControls(k)}${WHY[k] ? ` (${WHY[k]})` : ""}`);
}

function entry(list: unknown, name: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.find((e): e is Record<string, unknown> => asRecord(e)?.name === name);
}

function asRecord(x: unknown): Record<string, unknown> | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;
}
