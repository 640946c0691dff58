// A small RBAC evaluator: may a service account do a verb on a resource, given the host's roles and bindings (pure).
import type { KubeObject } from "../../kube/object.js";
import type { HostSnapshot } from "./types.js";

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}

interface Binding {
  roleRef?: { kind?: string; name?: string };
  subjects?: Array<{ kind?: string; name?: string; namespace?: string }>;
}

const has = (list: string[] | undefined, value: string) => !!list && (list.includes("*") || list.includes(value));

function ruleAllows(rule: Rule, group: string, resource: string, verb: string): boolean {
  return has(rule.apiGroups, group) && has(rule.resources, resource) && has(rule.verbs, verb) && !(rule.resourceNames && rule.resourceNames.length > 0);
}

function bindsServiceAccount(b: Binding, namespace: string, name: string): boolean {
  return (b.subjects ?? []).some(
    (s) =>
      (s.kind === "ServiceAccount" && s.name === name && s.namespace === namespace) ||
      (s.kind === "User" && s.name === `system:serviceaccount:${namespace}:${name}`) ||
      (s.kind === "Group" && (s.name === "system:serviceaccounts" || s.name === `system:serviceaccounts:${namespace}`)),
  );
}

function rulesOf(o: KubeObject | undefined): Rule[] {
  return ((o as { rules?: Rule[] } | undefined)?.rules ?? []) as Rule[];
}

/**
 * True when the service account `namespace/name` may `verb` the `resource` of `group`: in `scopeNamespace`
 * (Roles there, and ClusterRoles through RoleBindings there) or cluster-wide (ClusterRoleBindings).
 */
export function allowed(s: HostSnapshot["rbac"], sa: { namespace: string; name: string }, group: string, resource: string, verb: string, scopeNamespace?: string): boolean {
  const role = (kind: string | undefined, name: string | undefined, ns: string | undefined) =>
    kind === "ClusterRole" ? s.clusterRoles.find((r) => r.metadata.name === name) : s.roles.find((r) => r.metadata.name === name && r.metadata.namespace === ns);
  for (const b of s.clusterRoleBindings as unknown as Array<Binding & KubeObject>) {
    if (bindsServiceAccount(b, sa.namespace, sa.name) && rulesOf(role(b.roleRef?.kind, b.roleRef?.name, undefined)).some((r) => ruleAllows(r, group, resource, verb))) return true;
  }
  if (scopeNamespace === undefined) return false;
  for (const b of s.roleBindings as unknown as Array<Binding & KubeObject>) {
    if (b.metadata.namespace !== scopeNamespace || !bindsServiceAccount(b, sa.namespace, sa.name)) continue;
    if (rulesOf(role(b.roleRef?.kind, b.roleRef?.name, scopeNamespace)).some((r) => ruleAllows(r, group, resource, verb))) return true;
  }
  return false;
}
