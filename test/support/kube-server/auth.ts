// Bearer-token users and simple RBAC-like rules: 401 for unknown tokens, 403 (worded like upstream) when neither their
// rules nor the stored RBAC bindings (rbac.ts) allow.
import { serviceAccountGroups } from "./rbac.js";
import { qualified, ApiError } from "./status.js";

export interface Rule {
  verbs: string[];
  apiGroups: string[];
  /** Resource names, "*", or "plural/subresource" (e.g. "pods/log"). */
  resources: string[];
  /** Namespaces the rule applies in; absent: every namespace and cluster scope. */
  namespaces?: string[];
}

export interface User {
  name: string;
  /** undefined: full access. */
  rules?: Rule[];
}

export interface Access {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** Whether stored RBAC allows a user (by name and groups) a request. */
export type RbacCheck = (user: string, groups: readonly string[], a: Access) => boolean;

export class Auth {
  private readonly users = new Map<string, User>();
  private rbac: RbacCheck | undefined;

  constructor(
    private readonly adminToken = "admin",
    private readonly anonymous: "admin" | "reject" = "admin",
  ) {
    this.users.set(adminToken, { name: adminToken });
  }

  addUser(token: string, rules: Rule[] | undefined, name = token): void {
    this.users.set(token, rules ? { name, rules } : { name });
  }

  /** A user by name (impersonation): a known one with its rules, anyone else with no rights at all. */
  byName(name: string): User {
    for (const user of this.users.values()) if (user.name === name) return user;
    return { name, rules: [] };
  }

  /** Also allow what stored Roles, ClusterRoles and their bindings grant, as the real API server's RBAC does. */
  useRbac(check: RbacCheck): void {
    this.rbac = check;
  }

  /** Whether `name` is one of this server's users (by name). */
  isUser(name: string): boolean {
    for (const user of this.users.values()) if (user.name === name) return true;
    return false;
  }

  /** The user a bearer token names (a TokenReview), or undefined for a token no user has. */
  ofToken(token: string): User | undefined {
    return this.users.get(token);
  }

  /**
   * The user of an Authorization header; throws 401 when unknown (or missing, unless anonymous requests act as admin).
   */
  authenticate(header: string | undefined): User {
    if (header === undefined && this.anonymous === "admin") return this.users.get(this.adminToken)!;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    const user = m ? this.users.get(m[1]!) : undefined;
    if (!user) throw new ApiError(401, "Unauthorized", "Unauthorized");
    return user;
  }

  allowed(user: User, a: Access): boolean {
    if (!user.rules) return true;
    return this.ruleAllows(user.rules, a) || (this.rbac?.(user.name, serviceAccountGroups(user.name), a) ?? false);
  }

  /** Whether the user's own rules (not stored RBAC) allow the request; a user without rules is allowed everything. */
  ownRulesAllow(user: User, a: Access): boolean {
    return !user.rules || this.ruleAllows(user.rules, a);
  }

  private ruleAllows(rules: Rule[], a: Access): boolean {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return rules.some(
      (r) =>
        (r.verbs.includes("*") || r.verbs.includes(a.verb)) &&
        (r.apiGroups.includes("*") || r.apiGroups.includes(a.group)) &&
        (r.resources.includes("*") ||
          r.resources.includes(resource) ||
          (a.subresource !== undefined && r.resources.includes(`${a.resource}/*`))) &&
        (r.namespaces === undefined || (a.namespace !== undefined && r.namespaces.includes(a.namespace))),
    );
  }

  /** Throws the upstream 403 when the user may not do this. */
  authorize(user: User, a: Access): void {
    if (this.allowed(user, a)) return;
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const subject = a.name ? `${qualified(a.resource, a.group)} "${a.name}"` : qualified(a.resource, a.group);
    const scope = a.namespace !== undefined ? `in the namespace "${a.namespace}"` : "at the cluster scope";
    const message =
      `${subject} is forbidden: User "${user.name}" cannot ${a.verb} resource "${resource}" in API ` +
      `group "${a.group}" ${scope}`;
    const details: { name?: string; group?: string; kind: string } = { kind: a.resource };
    if (a.name) details.name = a.name;
    if (a.group) details.group = a.group;
    throw new ApiError(403, message, "Forbidden", details);
  }
}
