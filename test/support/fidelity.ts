// Behaviours where our in-memory API server must answer as the real one does, as one table of cases run against each:
// immutable fields, RBAC escalation prevention, impersonation, kinds the host does not serve, SubjectAccessReviews
// answered by RBAC, bindings to roles that do not exist, and /openapi/v3 by release.
import { expect } from "chai";
import { request as httpRequest } from "node:http";
import type { KubeServer } from "./kube-server/index.js";
import type { RealKube } from "./real-kube.js";

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** What the cases need of a server: requests as a user (or the admin), and rights granted to a user in a namespace. */
export interface FidelityTarget {
  request(
    method: string,
    path: string,
    body?: unknown,
    opts?: { user?: string; contentType?: string; impersonate?: string },
  ): Promise<{ status: number; body: { message?: string } & Record<string, unknown> }>;
  grant(user: string, namespace: string, rules: PolicyRule[]): Promise<void>;
}

export const FIDELITY_USER = "limited";
export const UNSERVED_GROUP = "networking.mesh.io";
const NS = "fidelity";

/** The in-memory server as a target; start it with `unservedGroups: [UNSERVED_GROUP]`. */
export function inMemoryTarget(server: () => KubeServer): FidelityTarget {
  const granted = new Map<string, Array<PolicyRule & { namespaces: string[] }>>();
  return {
    request(method, path, body, opts = {}) {
      return new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const headers: Record<string, string> = {
          Authorization: `Bearer ${opts.user ?? "admin"}`,
          Accept: "application/json",
        };
        if (payload) headers["Content-Type"] = opts.contentType ?? "application/json";
        if (opts.impersonate) headers["Impersonate-User"] = opts.impersonate;
        const req = httpRequest(new URL(path, server().url), { method, headers }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d) => (text += d));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: text.startsWith("{") ? JSON.parse(text) : { message: text } }),
          );
        });
        req.on("error", reject);
        req.end(payload);
      });
    },
    async grant(user, namespace, rules) {
      const all = [...(granted.get(user) ?? []), ...rules.map((r) => ({ ...r, namespaces: [namespace] }))];
      granted.set(user, all);
      server().addUser(user, all, user);
    },
  };
}

/** The real API server as a target; start it with `users: [{ name: FIDELITY_USER }]`. */
export function realTarget(kube: () => RealKube): FidelityTarget {
  let n = 0;
  return {
    async request(method, path, body, opts = {}) {
      const res = await kube().request<{ message?: string } & Record<string, unknown>>(method, path, body, {
        token: opts.user ? kube().tokenOf(opts.user) : undefined,
        contentType: opts.contentType,
        headers: opts.impersonate ? { "Impersonate-User": opts.impersonate } : {},
      });
      return { status: res.status, body: typeof res.body === "string" ? { message: res.body } : res.body };
    },
    async grant(user, namespace, rules) {
      const name = `grant-${++n}`;
      const role = await kube().request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace },
        rules,
      });
      expect(role.status, JSON.stringify(role.body)).to.equal(201);
      const binding = await kube().request(
        "POST",
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name, namespace },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
        },
      );
      expect(binding.status, JSON.stringify(binding.body)).to.equal(201);
      // The authorizer learns of the binding through its informers a moment after the write: wait until it allows.
      const rule = rules[0]!;
      const [resource, subresource] = rule.resources[0]!.split("/");
      const attributes = { namespace, verb: rule.verbs[0], group: rule.apiGroups[0], resource, subresource };
      await settled(async () => {
        const review = await kube().request<{ status?: { allowed?: boolean } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: { resourceAttributes: attributes },
          },
          { token: kube().tokenOf(user) },
        );
        expect(
          (review.body as { status?: { allowed?: boolean } }).status?.allowed,
          `${user} granted ${JSON.stringify(attributes)}`,
        ).to.equal(true);
      });
    },
  };
}

/**
 * Runs `check` until it passes (10 s at most): the real server's RBAC authorizer sees a new binding through its
 * informers a moment after the write. The in-memory server passes at once.
 */
async function settled(check: () => Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const statefulSet = (serviceName: string, replicas = 1) => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "db", namespace: NS },
  spec: {
    replicas,
    serviceName,
    selector: { matchLabels: { app: "db" } },
    template: {
      metadata: { labels: { app: "db" } },
      spec: { containers: [{ name: "db", image: "example.com/db:1" }] },
    },
  },
});

/**
 * What a refusal says in fields, never in wording (which changes between releases): the code, the reason, the object
 * named in `details` and the `details.causes` as `field reason` pairs (sorted).
 */
function refusal(res: { status: number; body: Record<string, unknown> }): {
  code: number;
  reason: unknown;
  details: Record<string, unknown>;
  causes: string[];
} {
  const details = { ...((res.body.details ?? {}) as Record<string, unknown>) };
  const causes = ((details.causes ?? []) as Array<{ field?: string; reason?: string }>)
    .map((c) => `${c.field ?? ""} ${c.reason ?? ""}`)
    .sort();
  delete details.causes;
  return { code: res.status, reason: res.body.reason, details, causes };
}

const role = (name: string, rules: PolicyRule[]) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "Role",
  metadata: { name, namespace: NS },
  rules,
});

/** Registers the cases (mocha `it`s) for a target; call inside a describe whose hooks start the server. */
export function fidelityCases(target: () => FidelityTarget): void {
  const apply = (path: string, body: unknown) =>
    target().request("PATCH", `${path}?fieldManager=fidelity`, body, { contentType: "application/apply-patch+yaml" });

  before(async () => {
    const ns = await target().request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    expect(ns.status, JSON.stringify(ns.body)).to.equal(201);
  });

  it("refuses a change of a StatefulSet's serviceName with 422, and takes a change of replicas", async () => {
    const path = `/apis/apps/v1/namespaces/${NS}/statefulsets/db`;
    expect((await apply(path, statefulSet("db"))).status).to.equal(201);
    const refused = await apply(path, statefulSet("db-other"));
    expect(refusal(refused)).to.deep.equal({
      code: 422,
      reason: "Invalid",
      details: { name: "db", group: "apps", kind: "StatefulSet" },
      causes: ["spec FieldValueForbidden"],
    });
    expect((await apply(path, statefulSet("db", 3))).status).to.equal(200);
  });

  it("refuses a change of a Service's cluster IP with 422, naming the field", async () => {
    const created = await target().request("POST", `/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS },
      spec: { ports: [{ port: 80 }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const ip = (created.body.spec as { clusterIP: string }).clusterIP;
    const other = ip.replace(/\d+$/, (d) => String((Number(d) % 200) + 7));
    const refused = await target().request(
      "PATCH",
      `/api/v1/namespaces/${NS}/services/web`,
      { spec: { clusterIP: other, clusterIPs: [other] } },
      { contentType: "application/merge-patch+json" },
    );
    expect(refusal(refused)).to.deep.equal({
      code: 422,
      reason: "Invalid",
      details: { name: "web", kind: "Service" },
      causes: ["spec.clusterIPs[0] FieldValueInvalid"],
    });
  });

  it(
    "refuses a Role granting what its creator does not hold (escalation), and allows it with the " + "escalate verb",
    async () => {
      await target().grant(FIDELITY_USER, NS, [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create", "get", "update", "patch"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
      ]);
      const path = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`;
      const held = await target().request(
        "POST",
        path,
        role("pod-reader", [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]),
        { user: FIDELITY_USER },
      );
      expect(held.status, JSON.stringify(held.body)).to.equal(201);
      const escalating = await target().request(
        "POST",
        path,
        role("secret-deleter", [{ apiGroups: [""], resources: ["secrets"], verbs: ["delete"] }]),
        { user: FIDELITY_USER },
      );
      // The user may create Roles (pod-reader above): a 403 for this one is the escalation check.
      expect(refusal(escalating)).to.deep.equal({
        code: 403,
        reason: "Forbidden",
        details: { name: "secret-deleter", group: "rbac.authorization.k8s.io", kind: "roles" },
        causes: [],
      });
      await target().grant(FIDELITY_USER, NS, [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["escalate"] },
      ]);
      const escalated = await target().request(
        "POST",
        path,
        role("secret-deleter", [{ apiGroups: [""], resources: ["secrets"], verbs: ["delete"] }]),
        { user: FIDELITY_USER },
      );
      expect(escalated.status, JSON.stringify(escalated.body)).to.equal(201);
    },
  );

  it("acts as the impersonated user, and refuses impersonation to a user without the impersonate verb", async () => {
    const asLimited = await target().request("GET", `/api/v1/namespaces/${NS}/secrets`, undefined, {
      impersonate: FIDELITY_USER,
    });
    expect(refusal(asLimited)).to.deep.equal({
      code: 403,
      reason: "Forbidden",
      details: { kind: "secrets" },
      causes: [],
    });
    const podsAsLimited = await target().request("GET", `/api/v1/namespaces/${NS}/pods/none`, undefined, {
      impersonate: FIDELITY_USER,
    });
    expect(podsAsLimited.status).to.equal(404);
    const refused = await target().request("GET", `/api/v1/namespaces/${NS}/pods`, undefined, {
      user: FIDELITY_USER,
      impersonate: "admin",
    });
    // 1.20 names the refused impersonation (users "admin"), current releases the request's resource (pods): only the
    // refusal itself is common to both.
    expect(refusal(refused)).to.include({ code: 403, reason: "Forbidden" });
    expect(refused.body.kind).to.equal("Status");
  });

  it(
    "refuses a ConfigMap whose values exceed 1 MiB with 422 (keys not counted), by create and by " +
      "server-side apply",
    async () => {
      const path = `/api/v1/namespaces/${NS}/configmaps`;
      const fits = await target().request("POST", path, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "full" },
        data: { a: "x".repeat(512 * 1024), b: "y".repeat(512 * 1024) },
      });
      expect(fits.status, JSON.stringify(fits.body).slice(0, 300)).to.equal(201);
      const over = await target().request("POST", path, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "over" },
        data: { a: "x".repeat(512 * 1024), b: "y".repeat(512 * 1024 + 1) },
      });
      expect(refusal(over)).to.deep.equal({
        code: 422,
        reason: "Invalid",
        details: { name: "over", kind: "ConfigMap" },
        causes: ["[] FieldValueTooLong"],
      });
      // An apply that adds a key to an existing ConfigMap is judged by the whole result.
      expect(
        (
          await apply(`${path}/grows`, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "grows" },
            data: { a: "x".repeat(600 * 1024) },
          })
        ).status,
      ).to.equal(201);
      const grown = await target().request(
        "PATCH",
        `${path}/grows?fieldManager=other`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "grows" }, data: { b: "y".repeat(600 * 1024) } },
        { contentType: "application/apply-patch+yaml" },
      );
      expect(refusal(grown)).to.deep.equal({
        code: 422,
        reason: "Invalid",
        details: { name: "grows", kind: "ConfigMap" },
        causes: ["[] FieldValueTooLong"],
      });
    },
  );

  it("answers 404 for a kind whose group is not installed, and leaves the group out of discovery", async () => {
    const missing = await target().request("GET", `/apis/${UNSERVED_GROUP}/v1beta1/namespaces/${NS}/virtualservices`);
    expect(missing.status).to.equal(404);
    const groupVersion = await target().request("GET", `/apis/${UNSERVED_GROUP}/v1beta1`);
    expect(groupVersion.status).to.equal(404);
    const apis = await target().request("GET", "/apis");
    expect((apis.body.groups as Array<{ name: string }>).map((g) => g.name)).to.not.include(UNSERVED_GROUP);
  });

  const rbacPath = (ns?: string) => `/apis/rbac.authorization.k8s.io/v1${ns ? `/namespaces/${ns}` : ""}`;
  const create = async (path: string, body: unknown) => {
    const res = await target().request("POST", path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  const binding = (
    kind: "RoleBinding" | "ClusterRoleBinding",
    name: string,
    roleKind: "Role" | "ClusterRole",
    roleName: string,
    subjects: object[],
  ) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind,
    metadata: kind === "RoleBinding" ? { name, namespace: NS } : { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: roleKind, name: roleName },
    subjects,
  });
  const review = (spec: Record<string, unknown>, opts: { user?: string; local?: boolean } = {}) =>
    target().request(
      "POST",
      opts.local
        ? `/apis/authorization.k8s.io/v1/namespaces/${NS}/localsubjectaccessreviews`
        : "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      {
        apiVersion: "authorization.k8s.io/v1",
        kind: opts.local ? "LocalSubjectAccessReview" : "SubjectAccessReview",
        ...(opts.local ? { metadata: { namespace: NS } } : {}),
        spec,
      },
      { user: opts.user },
    );
  /**
   * allowed, denied and whether a reason was given: RBAC names the binding that allows, and says nothing when it
   * denies.
   */
  const decision = (res: { status: number; body: Record<string, unknown> }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const status = (res.body.status ?? {}) as { allowed?: boolean; denied?: boolean; reason?: string };
    return { allowed: status.allowed === true, denied: status.denied === true, reason: Boolean(status.reason) };
  };
  const ALLOWED = { allowed: true, denied: false, reason: true };
  const NOT_ALLOWED = { allowed: false, denied: false, reason: false };
  const sa = (name: string) => ({
    user: `system:serviceaccount:${NS}:${name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"],
  });
  const attrs = (verb: string, resource: string, namespace?: string, group = "") => ({
    resourceAttributes: { verb, group, resource, ...(namespace ? { namespace } : {}) },
  });

  it(
    "answers SubjectAccessReviews by RBAC: bindings to ServiceAccounts (namespace defaulted), users and groups; " +
      "403 without create on them",
    async () => {
      await create(
        `${rbacPath(NS)}/roles`,
        role("sar-pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]),
      );
      await create(
        `${rbacPath(NS)}/rolebindings`,
        binding("RoleBinding", "sar-pods", "Role", "sar-pods", [{ kind: "ServiceAccount", name: "sar-reader" }]),
      );
      await create(
        `${rbacPath(NS)}/roles`,
        role("sar-config", [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]),
      );
      await create(
        `${rbacPath(NS)}/rolebindings`,
        binding("RoleBinding", "sar-config", "Role", "sar-config", [
          { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "sar-user" },
        ]),
      );
      await create(`${rbacPath()}/clusterroles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "fidelity-sar-nodes" },
        rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }],
      });
      await create(
        `${rbacPath()}/clusterrolebindings`,
        binding("ClusterRoleBinding", "fidelity-sar-nodes", "ClusterRole", "fidelity-sar-nodes", [
          { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: `system:serviceaccounts:${NS}` },
        ]),
      );

      // The last RoleBinding and ClusterRoleBinding written are seen by the authorizer once these are allowed.
      await settled(async () =>
        expect(decision(await review({ ...sa("other"), ...attrs("get", "nodes") }))).to.deep.equal(ALLOWED),
      );
      await settled(async () =>
        expect(decision(await review({ user: "sar-user", ...attrs("get", "configmaps", NS) }))).to.deep.equal(ALLOWED),
      );
      expect(decision(await review({ ...sa("sar-reader"), ...attrs("get", "pods", NS) }))).to.deep.equal(ALLOWED);
      expect(
        decision(await review({ ...sa("sar-reader"), ...attrs("get", "pods", NS) }, { local: true })),
      ).to.deep.equal(ALLOWED);
      expect(decision(await review({ ...sa("sar-reader"), ...attrs("delete", "pods", NS) }))).to.deep.equal(
        NOT_ALLOWED,
      );
      expect(decision(await review({ ...sa("sar-reader"), ...attrs("get", "pods", "default") }))).to.deep.equal(
        NOT_ALLOWED,
      );
      expect(decision(await review({ ...sa("other"), ...attrs("get", "pods", NS) }))).to.deep.equal(NOT_ALLOWED);
      // Through groups: every ServiceAccount of the namespace reads nodes, every authenticated user the namespace's
      // ConfigMaps.
      expect(decision(await review({ ...sa("other"), ...attrs("get", "nodes") }))).to.deep.equal(ALLOWED);
      expect(
        decision(
          await review({
            user: `system:serviceaccount:default:other`,
            groups: ["system:serviceaccounts", "system:serviceaccounts:default"],
            ...attrs("get", "nodes"),
          }),
        ),
      ).to.deep.equal(NOT_ALLOWED);
      expect(
        decision(await review({ user: "anyone", groups: ["system:authenticated"], ...attrs("get", "configmaps", NS) })),
      ).to.deep.equal(ALLOWED);
      expect(decision(await review({ user: "anyone", ...attrs("get", "configmaps", NS) }))).to.deep.equal(NOT_ALLOWED);
      expect(decision(await review({ user: "sar-user", ...attrs("get", "configmaps", NS) }))).to.deep.equal(ALLOWED);
      expect(decision(await review({ user: "sar-user", ...attrs("get", "configmaps", "default") }))).to.deep.equal(
        NOT_ALLOWED,
      );

      // Neither user nor groups: invalid.
      expect(refusal(await review(attrs("get", "pods", NS)))).to.deep.equal({
        code: 422,
        reason: "Invalid",
        details: { group: "authorization.k8s.io" },
        causes: ["spec.user FieldValueInvalid"],
      });
      // A user without create on subjectaccessreviews is refused; a Role can grant the namespaced
      // LocalSubjectAccessReview.
      expect(
        refusal(await review({ ...sa("sar-reader"), ...attrs("get", "pods", NS) }, { user: FIDELITY_USER })),
      ).to.deep.equal({
        code: 403,
        reason: "Forbidden",
        details: { group: "authorization.k8s.io", kind: "subjectaccessreviews" },
        causes: [],
      });
      expect(
        refusal(
          await review({ ...sa("sar-reader"), ...attrs("get", "pods", NS) }, { user: FIDELITY_USER, local: true }),
        ),
      ).to.deep.equal({
        code: 403,
        reason: "Forbidden",
        details: { group: "authorization.k8s.io", kind: "localsubjectaccessreviews" },
        causes: [],
      });
      await target().grant(FIDELITY_USER, NS, [
        { apiGroups: ["authorization.k8s.io"], resources: ["localsubjectaccessreviews"], verbs: ["create"] },
      ]);
      expect(
        decision(
          await review({ ...sa("sar-reader"), ...attrs("get", "pods", NS) }, { user: FIDELITY_USER, local: true }),
        ),
      ).to.deep.equal(ALLOWED);
    },
  );

  it("authorises requests by stored RBAC: a RoleBinding to the user, and one to system:authenticated", async () => {
    const services = `/api/v1/namespaces/${NS}/services`;
    const accounts = `/api/v1/namespaces/${NS}/serviceaccounts`;
    expect((await target().request("GET", services, undefined, { user: FIDELITY_USER })).status).to.equal(403);
    expect((await target().request("GET", accounts, undefined, { user: FIDELITY_USER })).status).to.equal(403);
    await create(
      `${rbacPath(NS)}/roles`,
      role("rbac-services", [{ apiGroups: [""], resources: ["services"], verbs: ["list"] }]),
    );
    await create(
      `${rbacPath(NS)}/rolebindings`,
      binding("RoleBinding", "rbac-services", "Role", "rbac-services", [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: FIDELITY_USER },
      ]),
    );
    await create(
      `${rbacPath(NS)}/roles`,
      role("rbac-accounts", [{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["list"] }]),
    );
    await create(
      `${rbacPath(NS)}/rolebindings`,
      binding("RoleBinding", "rbac-accounts", "Role", "rbac-accounts", [
        { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
      ]),
    );
    await settled(async () =>
      expect((await target().request("GET", accounts, undefined, { user: FIDELITY_USER })).status).to.equal(200),
    );
    await settled(async () =>
      expect((await target().request("GET", services, undefined, { user: FIDELITY_USER })).status).to.equal(200),
    );
    expect(
      (await target().request("GET", "/api/v1/namespaces/default/services", undefined, { user: FIDELITY_USER })).status,
    ).to.equal(403);
  });

  it(
    "refuses a binding to a role that does not exist to a user without bind (404 for the role its rules are " +
      "looked up in); allows it to system:masters and with bind",
    async () => {
      await target().grant(FIDELITY_USER, NS, [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create", "get", "delete"] },
      ]);
      const subjects = [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "someone" }];
      const path = `${rbacPath(NS)}/rolebindings`;
      for (const [name, kind] of [
        ["to-missing-role", "Role"],
        ["to-missing-clusterrole", "ClusterRole"],
      ] as const) {
        const refused = await target().request(
          "POST",
          path,
          binding("RoleBinding", name, kind, `no-such-${kind.toLowerCase()}`, subjects),
          { user: FIDELITY_USER },
        );
        // The escalation check resolves the role's rules first: the role's NotFound is the answer, not a 403. Its
        // details name the role, for the role's resource (1.20) or the binding's (1.36): either is the server's own.
        const answer = refusal(refused);
        expect(answer).to.deep.include({ code: 404, reason: "NotFound", causes: [] });
        expect(answer.details).to.deep.include({
          name: `no-such-${kind.toLowerCase()}`,
          group: "rbac.authorization.k8s.io",
        });
        expect(answer.details.kind).to.be.oneOf([`${kind.toLowerCase()}s`, "rolebindings"]);
      }
      // The admin is in system:masters, which may grant anything: the bindings are stored, dangling.
      await create(path, binding("RoleBinding", "admin-to-missing-role", "Role", "no-such-role", subjects));
      await create(
        `${rbacPath()}/clusterrolebindings`,
        binding(
          "ClusterRoleBinding",
          "fidelity-to-missing-clusterrole",
          "ClusterRole",
          "no-such-clusterrole",
          subjects,
        ),
      );
      // A binding to a role that exists with rules the user holds is allowed: the refusal above is for the missing
      // role.
      const held = await target().request(
        "POST",
        path,
        binding("RoleBinding", "to-held-role", "Role", "pod-reader", subjects),
        { user: FIDELITY_USER },
      );
      expect(held.status, JSON.stringify(held.body)).to.equal(201);
      await target().grant(FIDELITY_USER, NS, [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["bind"] },
      ]);
      const bound = await target().request(
        "POST",
        path,
        binding("RoleBinding", "to-missing-role", "Role", "no-such-role", subjects),
        { user: FIDELITY_USER },
      );
      expect(bound.status, JSON.stringify(bound.body)).to.equal(201);
    },
  );

  it(
    "serves /openapi/v3 from 1.23 only: 404 on 1.20, a document listing group versions on later " + "releases",
    async () => {
      const version = await target().request("GET", "/version");
      const minor = Number.parseInt(String(version.body.minor), 10);
      const v3 = await target().request("GET", "/openapi/v3");
      if (minor < 23) expect(v3.status).to.equal(404);
      else {
        expect(v3.status).to.equal(200);
        expect(Object.keys(v3.body.paths as object)).to.include("api/v1");
      }
      expect((await target().request("GET", "/openapi/v2")).status).to.equal(200);
    },
  );
}
