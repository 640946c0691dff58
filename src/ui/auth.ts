// Who may see the fleet on the reconciler: a bearer token the host's TokenReview accepts, whose user a
// SubjectAccessReview allows to read vc's records; decided by the host's RBAC, as the metrics proxy's callers are.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { KubeClient } from "../host/client.js";
import type { Decision } from "./server.js";

/** What a caller must be allowed to do to see the fleet: list ConfigMaps in the records namespace (vc's records). */
export interface FleetAccess {
  verb: string;
  resource: string;
  namespace: string;
}

export const fleetAccess = (recordsNamespace: string): FleetAccess => ({
  verb: "list",
  resource: "configmaps",
  namespace: recordsNamespace,
});

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface TokenAuthorizerOptions {
  /** How long a decision is kept for the same token (default 10 s): a page's requests cost one review each 10 s. */
  cacheMs?: number;
  /** Decisions kept at most (default 1,000); the oldest go first. */
  maxEntries?: number;
  now?: () => number;
}

const bearer = (req: IncomingMessage): string | undefined => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ""));
  return m?.[1];
};

/**
 * Decides requests by their bearer token: 401 without one or when the API server's TokenReview does not accept it,
 * 403 when its SubjectAccessReview does not allow `access`, 503 when either review cannot be made. Decisions are kept
 * a short while by a hash of the token, never the token itself.
 */
export function tokenAuthorizer(
  client: KubeClient,
  access: FleetAccess,
  opts: TokenAuthorizerOptions = {},
): (req: IncomingMessage) => Promise<Decision> {
  const cacheMs = opts.cacheMs ?? 10_000;
  const maxEntries = opts.maxEntries ?? 1000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { at: number; decision: Promise<Decision> }>();
  const decide = async (token: string): Promise<Decision> => {
    let user: UserInfo;
    try {
      const review = await client.request<{ status?: { authenticated?: boolean; user?: UserInfo; error?: string } }>(
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } } },
      );
      if (!review.status?.authenticated || !review.status.user?.username)
        return { allowed: false, status: 401, message: "the API server did not accept this token: sign in again" };
      user = review.status.user;
    } catch (err) {
      return { allowed: false, status: 503, message: `cannot verify the token: ${(err as Error).message}` };
    }
    try {
      const sar = await client.request<{ status?: { allowed?: boolean } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              ...(user.uid ? { uid: user.uid } : {}),
              groups: user.groups ?? [],
              ...(user.extra ? { extra: user.extra } : {}),
              resourceAttributes: {
                namespace: access.namespace,
                verb: access.verb,
                group: "",
                resource: access.resource,
              },
            },
          },
        },
      );
      if (sar.status?.allowed) return { allowed: true };
      return {
        allowed: false,
        status: 403,
        message:
          `user "${user.username}" may not ${access.verb} ${access.resource} in namespace ${access.namespace} ` +
          "(vc's records), which seeing the fleet needs",
      };
    } catch (err) {
      return { allowed: false, status: 503, message: `cannot check the token's access: ${(err as Error).message}` };
    }
  };
  return (req) => {
    const token = bearer(req);
    if (!token)
      return Promise.resolve({
        allowed: false,
        status: 401,
        message: "this page needs a bearer token that the host's API server accepts",
      });
    const key = createHash("sha256").update(token).digest("hex");
    const hit = cache.get(key);
    if (hit && now() - hit.at < cacheMs) return hit.decision;
    const decision = decide(token);
    cache.delete(key);
    cache.set(key, { at: now(), decision });
    // A failed review is not kept: the next request asks again.
    void decision.then((d) => {
      if (!d.allowed && d.status === 503) cache.delete(key);
    });
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return decision;
  };
}
