// Who vc acts as on a host, for the record of a `vc apply`: the server's own answer (SelfSubjectReview), else what the kubeconfig says.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, type KubeClient } from "./client.js";

/**
 * How an identity was learned, strongest first. Only `SelfSubjectReview` is the server's own answer; a client
 * certificate's CN and a ServiceAccount token's subject are what the server authenticates those credentials as; a
 * kubeconfig user entry or an `as:` impersonation are names the kubeconfig gives; `local user` is the account vc runs
 * as (a `dir:` target has no server to ask).
 */
export type IdentitySource = "SelfSubjectReview" | "impersonation" | "client certificate" | "token subject" | "kubeconfig user" | "local user";

export interface Identity {
  name: string;
  from: IdentitySource;
}

/** The API versions that serve SelfSubjectReview, newest first (v1 since 1.28, v1beta1 since 1.27). */
const SELF_REVIEW_VERSIONS = ["v1", "v1beta1"];

/**
 * The user name the server says this client is (SelfSubjectReview), asked only where discovery lists one, so that no
 * request meant to be refused reaches the audit log: undefined when no version serves it (Kubernetes before 1.27, e.g.
 * 1.20, where creating one is a 403 for all but admins), "forbidden" when the server refuses to tell. Other failures
 * (the server does not answer, refuses the credentials) are thrown.
 */
export async function selfSubjectReview(client: KubeClient, log: (line: string) => void = () => {}): Promise<string | "forbidden" | undefined> {
  for (const version of SELF_REVIEW_VERSIONS) {
    const path = `/apis/authentication.k8s.io/${version}`;
    let served: { resources?: Array<{ name?: string }> } | undefined;
    try {
      served = await client.request("GET", path);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) continue;
      throw err;
    }
    if (!served?.resources?.some((r) => r.name === "selfsubjectreviews")) continue;
    log(`asking ${client.server} who we are: POST ${path}/selfsubjectreviews`);
    try {
      const review = await client.request<{ status?: { userInfo?: { username?: string } } }>("POST", `${path}/selfsubjectreviews`, {
        body: { apiVersion: `authentication.k8s.io/${version}`, kind: "SelfSubjectReview", metadata: {} },
      });
      return review?.status?.userInfo?.username ?? "";
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 403) return "forbidden";
      throw err;
    }
  }
  return undefined;
}

/**
 * The user the host authenticates this client as: the server's answer (selfSubjectReview) where it gives one; a
 * server that serves none, refuses it or fails answering falls back on the kubeconfig.
 */
export async function whoAmI(client: KubeClient): Promise<Identity> {
  try {
    const name = await selfSubjectReview(client);
    if (name && name !== "forbidden") return { name, from: "SelfSubjectReview" };
  } catch {
    // the kubeconfig has to do
  }
  return kubeconfigIdentity(client.kc);
}

/**
 * What the kubeconfig's current user says about who it is: an impersonated user (`as:`), the CN of a client
 * certificate, the subject of a ServiceAccount token (a JWT whose `sub` is `system:serviceaccount:NS:NAME`), else
 * the name of the user entry (a static token or an exec plugin carries no name the client can read).
 */
export function kubeconfigIdentity(kc: KubeConfig): Identity {
  const user = kc.getCurrentUser();
  if (!user) return { name: "unknown", from: "kubeconfig user" };
  if (user.impersonateUser) return { name: user.impersonateUser, from: "impersonation" };
  const cn = certificateName(user.certData, user.certFile);
  if (cn) return { name: cn, from: "client certificate" };
  const subject = serviceAccountSubject(user.token ?? tokenFromFile(user.authProvider?.config?.tokenFile));
  if (subject) return { name: subject, from: "token subject" };
  return { name: user.name, from: "kubeconfig user" };
}

/** The account vc runs as on this machine (for a target without a server). */
export function localIdentity(): Identity {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER || process.env.USERNAME;
  }
  return { name: name || "unknown", from: "local user" };
}

/** The CN of a PEM client certificate (inline base64 data or a file), or undefined. */
export function certificateName(certData: string | undefined, certFile: string | undefined): string | undefined {
  try {
    const pem = certData ? Buffer.from(certData, "base64") : certFile ? readFileSync(certFile) : undefined;
    if (!pem) return undefined;
    const subject = new X509Certificate(pem).subject;
    return /^CN=(.+)$/m.exec(subject)?.[1]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `sub` of a ServiceAccount JWT (`system:serviceaccount:NS:NAME`); undefined for any other token. Not verified: the server did that. */
export function serviceAccountSubject(token: string | undefined): string | undefined {
  const parts = token?.trim().split(".");
  if (!parts || parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { sub?: unknown };
    return typeof claims.sub === "string" && /^system:serviceaccount:[^:]+:[^:]+$/.test(claims.sub) ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

function tokenFromFile(file: unknown): string | undefined {
  if (typeof file !== "string") return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
