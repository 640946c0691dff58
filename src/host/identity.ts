// Who vc acts as on a host, for the record of a `vc apply` and the check of `vc connect`: only what the server confirms
// counts as verified.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import type { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, type KubeClient } from "./client.js";

/**
 * How an identity was learned. Verified by the server: `SelfSubjectReview` (its own answer), `TokenReview` (it
 * reviewed the very token vc sends), `client certificate` (the CN of the only credential vc sends, which the server
 * accepted: x509 authentication names the user by it), `impersonation` (the server let vc act as that user). Never
 * verified: the subject a token claims, the name of the kubeconfig's user entry (a kubeconfig may call itself
 * anything, `reconciler` included) and `local user`, the account vc runs as (a `dir:` target has no server to ask).
 */
type IdentitySource =
  | "SelfSubjectReview"
  | "TokenReview"
  | "impersonation"
  | "client certificate"
  | "token subject"
  | "kubeconfig user"
  | "local user";

export interface Identity {
  name: string;
  from: IdentitySource;
  /** Whether the server confirmed `name` (see IdentitySource). */
  verified: boolean;
}

/** The prefix of an identity the server did not confirm, wherever it is recorded or shown. */
const UNVERIFIED = "unverified: ";

/** The name that goes on a record: the server's when it confirmed one, else `unverified: <name>`. */
export function recordedName(id: Identity): string {
  return id.verified ? id.name : `${UNVERIFIED}${id.name}`;
}

/** The API versions that serve SelfSubjectReview, newest first (v1 since 1.28, v1beta1 since 1.27). */
const SELF_REVIEW_VERSIONS = ["v1", "v1beta1"];

/**
 * The user name the server says this client is (SelfSubjectReview), asked only where discovery lists one, so that no
 * request meant to be refused reaches the audit log: undefined when no version serves it (Kubernetes before 1.27, e.g.
 * 1.20, where creating one is a 403 for all but admins), "forbidden" when the server refuses to tell. Other failures
 * (the server does not answer, refuses the credentials) are thrown.
 */
async function selfSubjectReview(
  client: KubeClient,
  log: (line: string) => void = () => {},
): Promise<string | "forbidden" | undefined> {
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
      const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
        "POST",
        `${path}/selfsubjectreviews`,
        {
          body: { apiVersion: `authentication.k8s.io/${version}`, kind: "SelfSubjectReview", metadata: {} },
        },
      );
      return review?.status?.userInfo?.username ?? "";
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 403) return "forbidden";
      throw err;
    }
  }
  return undefined;
}

/** What the server said when asked who vc is. */
export interface ServerAnswer {
  /** Verified when the server confirmed it; else the kubeconfig's claim (kubeconfigIdentity). */
  identity: Identity;
  /** The last review vc sent. */
  via: "SelfSubjectReview" | "TokenReview" | "SelfSubjectAccessReview";
  /** The server refused that review (403): on a server without SelfSubjectReview, it may take vc as anonymous. */
  refused?: boolean;
}

/**
 * Asks the server who this client is. SelfSubjectReview where discovery lists one. On a server without it (1.20), a
 * SelfSubjectAccessReview, which only an authenticated user may create: its acceptance confirms, when the only
 * credential is a client certificate, the certificate's CN (x509 authentication names the user by it), and with `as:`
 * that the server lets vc act as that user; where it says TokenReviews are allowed, a TokenReview of the bearer token
 * vc sends (when nothing else is sent that could authenticate it) names the token's user. Anything else stays the
 * kubeconfig's unverified claim. Failures other than 403/404 (the server does not answer, refuses the credentials) are
 * thrown.
 */
export async function askServer(client: KubeClient, log: (line: string) => void = () => {}): Promise<ServerAnswer> {
  const claimed = kubeconfigIdentity(client.kc);
  const reviewed = await selfSubjectReview(client, log);
  if (reviewed === "forbidden") return { identity: claimed, via: "SelfSubjectReview", refused: true };
  if (reviewed !== undefined)
    return { identity: { name: reviewed, from: "SelfSubjectReview", verified: true }, via: "SelfSubjectReview" };
  const user = client.kc.getCurrentUser();
  const hasCert = !!(user?.certData || user?.certFile);
  const token = await bearerToken(client.kc);
  // One SelfSubjectAccessReview both proves the credentials authenticate (anonymous may not create one) and asks
  // whether a TokenReview would be allowed, so that no request meant to be refused reaches the audit log.
  const path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  log(`no SelfSubjectReview on ${client.server}: POST ${path}`);
  let mayReviewTokens = false;
  try {
    const access = await client.request<{ status?: { allowed?: boolean } }>("POST", path, {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { group: "authentication.k8s.io", resource: "tokenreviews", verb: "create" } },
      },
    });
    mayReviewTokens = access?.status?.allowed === true;
  } catch (err) {
    if (err instanceof KubeApiError && (err.status === 403 || err.status === 404))
      return { identity: claimed, via: "SelfSubjectAccessReview", refused: err.status === 403 };
    throw err;
  }
  if (user?.impersonateUser)
    return {
      identity: { name: user.impersonateUser, from: "impersonation", verified: true },
      via: "SelfSubjectAccessReview",
    };
  // With a token and a certificate both sent, which one the server went by cannot be told: neither is confirmed.
  if (token && !hasCert && mayReviewTokens) {
    const name = await tokenReview(client, token, log);
    if (name) return { identity: { name, from: "TokenReview", verified: true }, via: "TokenReview" };
  }
  const certOnly = hasCert && !token && !user?.exec && !user?.authProvider && claimed.from === "client certificate";
  return { identity: certOnly ? { ...claimed, verified: true } : claimed, via: "SelfSubjectAccessReview" };
}

/**
 * The user the server says a token belongs to (TokenReview); undefined when vc may not ask (403), the server serves
 * none (404) or it does not know the token.
 */
async function tokenReview(
  client: KubeClient,
  token: string,
  log: (line: string) => void,
): Promise<string | undefined> {
  const path = "/apis/authentication.k8s.io/v1/tokenreviews";
  log(`no SelfSubjectReview on ${client.server}: POST ${path} (our own token)`);
  try {
    const review = await client.request<{ status?: { authenticated?: boolean; user?: { username?: string } } }>(
      "POST",
      path,
      {
        body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
      },
    );
    return review?.status?.authenticated === true && review.status.user?.username
      ? review.status.user.username
      : undefined;
  } catch (err) {
    if (err instanceof KubeApiError && (err.status === 403 || err.status === 404)) return undefined;
    throw err;
  }
}

/** The bearer token the kubeconfig's current user sends (static, from a file or a credential plugin), if any. */
async function bearerToken(kc: KubeConfig): Promise<string | undefined> {
  const init = await kc.applyToFetchOptions({});
  const headers = init.headers as unknown as
    | { get?: (k: string) => string | null }
    | Record<string, string>
    | undefined;
  const value =
    typeof (headers as { get?: unknown })?.get === "function"
      ? (headers as { get: (k: string) => string | null }).get("Authorization")
      : (headers as Record<string, string> | undefined)?.Authorization;
  const match = /^Bearer\s+(\S+)$/i.exec(value ?? "");
  return match?.[1];
}

/**
 * The user the host authenticates this client as, for the record of a run: the server's confirmation (askServer)
 * where it gives one; otherwise the kubeconfig's claim, unverified (also when asking fails).
 */
export async function whoAmI(client: KubeClient): Promise<Identity> {
  try {
    return (await askServer(client)).identity;
  } catch {
    return kubeconfigIdentity(client.kc);
  }
}

/**
 * What the kubeconfig's current user says about who it is, unverified: an impersonated user (`as:`), the CN of a
 * client certificate, the subject of a ServiceAccount token (a JWT whose `sub` is `system:serviceaccount:NS:NAME`),
 * else the name of the user entry (a static token or an exec plugin carries no name the client can read).
 */
export function kubeconfigIdentity(kc: KubeConfig): Identity {
  const user = kc.getCurrentUser();
  if (!user) return { name: "unknown", from: "kubeconfig user", verified: false };
  if (user.impersonateUser) return { name: user.impersonateUser, from: "impersonation", verified: false };
  const cn = certificateName(user.certData, user.certFile);
  if (cn) return { name: cn, from: "client certificate", verified: false };
  const subject = serviceAccountSubject(user.token ?? tokenFromFile(user.authProvider?.config?.tokenFile));
  if (subject) return { name: subject, from: "token subject", verified: false };
  return { name: user.name, from: "kubeconfig user", verified: false };
}

/** The account vc runs as on this machine (for a target without a server). */
export function localIdentity(): Identity {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER || process.env.USERNAME;
  }
  return { name: name || "unknown", from: "local user", verified: false };
}

/** The CN of a PEM client certificate (inline base64 data or a file), or undefined. */
function certificateName(certData: string | undefined, certFile: string | undefined): string | undefined {
  try {
    const pem = certData ? Buffer.from(certData, "base64") : certFile ? readFileSync(certFile) : undefined;
    if (!pem) return undefined;
    const subject = new X509Certificate(pem).subject;
    return /^CN=(.+)$/m.exec(subject)?.[1]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `sub` of a ServiceAccount JWT (`system:serviceaccount:NS:NAME`); undefined for any other token. Not verified: the
 * server did that.
 */
export function serviceAccountSubject(token: string | undefined): string | undefined {
  const parts = token?.trim().split(".");
  if (parts?.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { sub?: unknown };
    return typeof claims.sub === "string" && /^system:serviceaccount:[^:]+:[^:]+$/.test(claims.sub)
      ? claims.sub
      : undefined;
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
