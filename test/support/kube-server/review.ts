// Access reviews: SelfSubjectAccessReview (may the requesting user do this? from the rules that authorise requests),
// SubjectAccessReview and LocalSubjectAccessReview (may this user or these groups? stored RBAC, as the real
// authorizer answers) and SelfSubjectReview (who am I?).
import type { Auth, User } from "./auth.js";
import { rbacAllows } from "./rbac.js";
import { ApiError, badRequest, type StatusCause } from "./status.js";
import type { Store } from "./store.js";

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export function accessReview(auth: Auth, user: User, body: unknown): Record<string, unknown> {
  const spec = (
    body as {
      spec?: { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: { path?: string; verb?: string } };
    } | null
  )?.spec;
  if (!spec || (!spec.resourceAttributes && !spec.nonResourceAttributes))
    throw badRequest("SelfSubjectAccessReview needs spec.resourceAttributes or spec.nonResourceAttributes");
  let allowed = true;
  if (spec.resourceAttributes) {
    const a = spec.resourceAttributes;
    allowed = auth.allowed(user, {
      verb: a.verb ?? "",
      group: a.group ?? "",
      resource: a.resource ?? "",
      subresource: a.subresource || undefined,
      namespace: a.namespace || undefined,
      name: a.name || undefined,
    });
  }
  // Like RBAC, a denial carries no reason (kubectl then prints a bare "no").
  const status: Record<string, unknown> = { allowed };
  return {
    kind: "SelfSubjectAccessReview",
    apiVersion: "authorization.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
}

/**
 * A TokenReview: the user a token names, with the groups the real server gives (an unknown token: not authenticated).
 */
export function tokenReview(auth: Auth, body: unknown): Record<string, unknown> {
  const token = (body as { spec?: { token?: string } } | null)?.spec?.token ?? "";
  const user = token ? auth.ofToken(token) : undefined;
  const groups = user && !user.rules ? ["system:masters", "system:authenticated"] : ["system:authenticated"];
  return {
    kind: "TokenReview",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec: { token },
    status: user ? { authenticated: true, user: { username: user.name, groups } } : { authenticated: false },
  };
}

export function selfReview(user: User): Record<string, unknown> {
  const groups = user.rules ? ["system:authenticated"] : ["system:masters", "system:authenticated"];
  return {
    kind: "SelfSubjectReview",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: user.name, groups } },
  };
}

interface SubjectSpec {
  user?: string;
  groups?: string[];
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
}

/**
 * A SubjectAccessReview (or, with `namespace`, a LocalSubjectAccessReview created in that namespace) answered from
 * stored RBAC bindings, a known test user's own rules, and system:masters. Invalid specs are refused with 422 as
 * upstream's validation does; a denial carries no reason, an RBAC grant names its binding.
 */
export function subjectAccessReview(
  auth: Auth,
  store: Store,
  kind: string,
  body: unknown,
  namespace?: string,
): Record<string, unknown> {
  const spec = ((body as { spec?: SubjectSpec } | null)?.spec ?? {}) as SubjectSpec;
  const causes: StatusCause[] = [];
  if (!spec.resourceAttributes && !spec.nonResourceAttributes)
    causes.push({
      field: "spec.resourceAttributes",
      reason: "FieldValueRequired",
      message: "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
    });
  if (spec.resourceAttributes && spec.nonResourceAttributes)
    causes.push({
      field: "spec.nonResourceAttributes",
      reason: "FieldValueInvalid",
      message: "Invalid value: cannot be specified in combination with resourceAttributes",
    });
  if (!spec.user && (spec.groups ?? []).length === 0)
    causes.push({
      field: "spec.user",
      reason: "FieldValueInvalid",
      message: 'Invalid value: "": at least one of user or group must be specified',
    });
  if (namespace !== undefined && spec.resourceAttributes && (spec.resourceAttributes.namespace ?? "") !== namespace) {
    throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  }
  if (causes.length > 0) {
    const summary = causes.map((c) => `${c.field}: ${c.message}`);
    // Upstream names the review's kind as decoded, which is empty: details carry the group only.
    throw new ApiError(
      422,
      `.authorization.k8s.io "" is invalid: ${summary.length === 1 ? summary[0] : `[${summary.join(", ")}]`}`,
      "Invalid",
      { group: "authorization.k8s.io", causes },
    );
  }
  const user = spec.user ?? "";
  const groups = spec.groups ?? [];
  const r = spec.resourceAttributes;
  const attributes = r
    ? {
        verb: r.verb ?? "",
        group: r.group ?? "",
        resource: r.resource ?? "",
        subresource: r.subresource || undefined,
        name: r.name || undefined,
        namespace: r.namespace || undefined,
      }
    : { verb: spec.nonResourceAttributes?.verb ?? "", path: spec.nonResourceAttributes?.path ?? "" };
  let status: { allowed: boolean; reason?: string };
  if (groups.includes("system:masters")) status = { allowed: true };
  else {
    status = rbacAllows(store, user, groups, attributes);
    // The test server's own users (added with rules, or the admin) are authorised by those rules.
    if (
      !status.allowed &&
      user !== "" &&
      r &&
      auth.isUser(user) &&
      auth.ownRulesAllow(auth.byName(user), { ...attributes, resource: r.resource ?? "", group: r.group ?? "" })
    ) {
      status = { allowed: true, reason: `RBAC: allowed by the test server's rules of User "${user}"` };
    }
  }
  const meta: Record<string, unknown> = { creationTimestamp: null };
  if (namespace !== undefined) meta.namespace = namespace;
  return { kind, apiVersion: "authorization.k8s.io/v1", metadata: meta, spec, status };
}
