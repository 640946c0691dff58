// Self reviews: SelfSubjectAccessReview (may the requesting user do this? from the rules that authorise requests) and
// SelfSubjectReview (who am I?).
import type { Auth, User } from "./auth.js";
import { badRequest } from "./status.js";

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export function accessReview(auth: Auth, user: User, body: unknown): Record<string, unknown> {
  const spec = (body as { spec?: { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: { path?: string; verb?: string } } } | null)?.spec;
  if (!spec || (!spec.resourceAttributes && !spec.nonResourceAttributes)) throw badRequest("SelfSubjectAccessReview needs spec.resourceAttributes or spec.nonResourceAttributes");
  let allowed = true;
  if (spec.resourceAttributes) {
    const a = spec.resourceAttributes;
    allowed = auth.allowed(user, { verb: a.verb ?? "", group: a.group ?? "", resource: a.resource ?? "", subresource: a.subresource || undefined, namespace: a.namespace || undefined, name: a.name || undefined });
  }
  // Like RBAC, a denial carries no reason (kubectl then prints a bare "no").
  const status: Record<string, unknown> = { allowed };
  return { kind: "SelfSubjectAccessReview", apiVersion: "authorization.k8s.io/v1", metadata: { creationTimestamp: null }, spec, status };
}

export function selfReview(user: User): Record<string, unknown> {
  const groups = user.rules ? ["system:authenticated"] : ["system:masters", "system:authenticated"];
  return { kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1", metadata: { creationTimestamp: null }, status: { userInfo: { username: user.name, groups } } };
}
