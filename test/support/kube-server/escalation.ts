// RBAC escalation prevention, as the real API server enforces it: a user may create or change a Role or ClusterRole
// only with permissions it holds (or with the `escalate` verb), and bind a role only when it holds the role's
// permissions (or has `bind` on it); a binding to a role that does not exist is a 404 without `bind` (system:masters
// may).
import type { KubeObject } from "../../../src/kube/object.js";
import type { Auth, User } from "./auth.js";
import type { Served } from "./catalog.js";
import { ApiError, notFound } from "./status.js";

const RBAC = "rbac.authorization.k8s.io";

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** The rules a role object grants; a binding grants the rules of the role it references (looked up by `roleRules`). */
export type RoleRules = (kind: string, namespace: string | undefined, name: string) => PolicyRule[] | undefined;

function held(auth: Auth, user: User, rule: PolicyRule, namespace: string | undefined): boolean {
  for (const group of rule.apiGroups ?? [""]) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const [res, sub] = resource.split("/", 2) as [string, string | undefined];
        if (!auth.allowed(user, { verb, group, resource: res, subresource: sub, namespace })) return false;
      }
    }
  }
  return (rule.nonResourceURLs ?? []).length === 0;
}

function format(rule: PolicyRule): string {
  const list = (xs: string[] | undefined) => (xs ?? []).map((x) => JSON.stringify(x)).join(" ");
  return `{APIGroups:[${list(rule.apiGroups)}], Resources:[${list(rule.resources)}], Verbs:[${list(rule.verbs)}]}`;
}

/** Throws the API server's 403 when `user` would grant, through `obj`, permissions it does not hold. */
export function checkEscalation(
  auth: Auth,
  user: User,
  served: Served,
  obj: KubeObject,
  roleRules: RoleRules,
  missingRoleNames: "role" | "binding" = "role",
): void {
  if (!user.rules || served.group !== RBAC) return;
  const namespace = served.namespaced ? obj.metadata.namespace : undefined;
  let rules: PolicyRule[];
  if (served.kind === "Role" || served.kind === "ClusterRole") {
    if (
      auth.allowed(user, { verb: "escalate", group: RBAC, resource: served.plural, namespace, name: obj.metadata.name })
    )
      return;
    rules = (obj as { rules?: PolicyRule[] }).rules ?? [];
  } else if (served.kind === "RoleBinding" || served.kind === "ClusterRoleBinding") {
    const ref = (obj as { roleRef?: { kind?: string; name?: string } }).roleRef ?? {};
    const plural = ref.kind === "Role" ? "roles" : "clusterroles";
    if (
      auth.allowed(user, {
        verb: "bind",
        group: RBAC,
        resource: plural,
        namespace: ref.kind === "Role" ? namespace : undefined,
        name: ref.name,
      })
    )
      return;
    const resolved = roleRules(ref.kind ?? "", ref.kind === "Role" ? namespace : undefined, ref.name ?? "");
    // The real server looks the role up to resolve its rules: a missing one is a 404 naming the role, for the role's
    // resource (1.20) or the binding's (1.36).
    if (resolved === undefined)
      throw notFound(missingRoleNames === "role" ? plural : served.plural, RBAC, ref.name ?? "");
    rules = resolved;
  } else return;
  const missing = rules.filter((r) => !held(auth, user, r, namespace));
  if (missing.length === 0) return;
  const groups = JSON.stringify(["system:authenticated"]);
  throw new ApiError(
    403,
    `${served.plural}.${RBAC} "${obj.metadata.name}" is forbidden: user "${user.name}" (groups=${groups}) is ` +
      `attempting to grant RBAC permissions not currently held:\n${missing.map(format).join("\n")}`,
    "Forbidden",
    { name: obj.metadata.name, group: RBAC, kind: served.plural },
  );
}
