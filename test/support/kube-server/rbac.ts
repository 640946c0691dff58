// RBAC as the API server's authorizer evaluates it from stored objects: the Roles and ClusterRoles that RoleBindings
// and ClusterRoleBindings grant to a user, its groups (system:authenticated, system:serviceaccounts[:ns]) or its
// ServiceAccount.
import type { Store } from "./store.js";

const RBAC_V1 = "rbac.authorization.k8s.io/v1";

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** What is asked: a resource request (resource set) or a non-resource path. */
export interface Attributes {
  verb: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  namespace?: string;
  path?: string;
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding {
  metadata: { name: string; namespace?: string };
  roleRef?: { kind?: string; name?: string };
  subjects?: Subject[];
}

/** The name and groups the API server authenticates a ServiceAccount token as. */
export function serviceAccountGroups(user: string): string[] {
  const m = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  return m
    ? ["system:serviceaccounts", `system:serviceaccounts:${m[1]}`, "system:authenticated"]
    : ["system:authenticated"];
}

function appliesTo(
  subject: Subject,
  user: string,
  groups: readonly string[],
  bindingNamespace: string | undefined,
): boolean {
  if (subject.kind === "User") return subject.name === user;
  if (subject.kind === "Group") return groups.includes(subject.name ?? "");
  if (subject.kind === "ServiceAccount") {
    // A RoleBinding's ServiceAccount subject without a namespace means one in the binding's namespace.
    const ns = subject.namespace || bindingNamespace;
    return ns !== undefined && ns !== "" && user === `system:serviceaccount:${ns}:${subject.name}`;
  }
  return false;
}

function has(list: readonly string[] | undefined, value: string): boolean {
  return (list ?? []).some((x) => x === "*" || x === value);
}

/**
 * Whether one rule allows the request (upstream's RuleAllows: verbs, groups, resources with subresources, names, URLs).
 */
function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (a.resource === undefined) {
    return (rule.nonResourceURLs ?? []).some(
      (u) => u === "*" || u === a.path || (u.endsWith("*") && (a.path ?? "").startsWith(u.slice(0, -1))),
    );
  }
  if (!has(rule.apiGroups, a.group ?? "")) return false;
  const resources = rule.resources ?? [];
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resourceOk = resources.some(
    (r) => r === "*" || r === combined || (a.subresource !== undefined && r === `*/${a.subresource}`),
  );
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (a.name !== undefined && names.includes(a.name));
}

/**
 * Whether stored RBAC allows `user` (with `groups`) the request, and upstream's reason when it does (`RBAC: allowed by
 * RoleBinding "name/ns" of Role "role" to User "user"`). A denial has no reason, as RBAC gives none.
 */
export function rbacAllows(
  store: Store,
  user: string,
  groups: readonly string[],
  a: Attributes,
): { allowed: boolean; reason?: string } {
  const scopes: Array<[string, string]> = [[`${RBAC_V1}/ClusterRoleBinding`, ""]];
  if (a.namespace && a.resource !== undefined) scopes.push([`${RBAC_V1}/RoleBinding`, a.namespace]);
  for (const [key, ns] of scopes) {
    for (const entry of store.entries(key, ns === "" ? undefined : ns)) {
      const binding = entry.obj as unknown as Binding;
      const bindingNs = binding.metadata.namespace || undefined;
      const subject = (binding.subjects ?? []).find((s) => appliesTo(s, user, groups, bindingNs));
      if (!subject) continue;
      const ref = binding.roleRef ?? {};
      const role =
        ref.kind === "Role"
          ? store.get(`${RBAC_V1}/Role`, bindingNs ?? "", ref.name ?? "")
          : ref.kind === "ClusterRole"
            ? store.get(`${RBAC_V1}/ClusterRole`, "", ref.name ?? "")
            : undefined;
      const rules = (role?.obj as { rules?: PolicyRule[] } | undefined)?.rules ?? [];
      if (!rules.some((r) => ruleAllows(r, a))) continue;
      const bindingName = bindingNs ? `${binding.metadata.name}/${bindingNs}` : binding.metadata.name;
      const roleName = ref.kind === "Role" ? `${ref.name}/${bindingNs}` : ref.name;
      const subjectName =
        subject.kind === "ServiceAccount" ? `${subject.name}/${subject.namespace || bindingNs}` : subject.name;
      const kind = ns === "" ? "ClusterRoleBinding" : "RoleBinding";
      return {
        allowed: true,
        reason:
          `RBAC: allowed by ${kind} "${bindingName}" of ${ref.kind} "${roleName}" to ${subject.kind} ` +
          `"${subjectName}"`,
      };
    }
  }
  return { allowed: false };
}
