// The reconciler's RBAC (deploy/reconciler/rbac.yaml) on the in-memory server, which enforces escalation prevention as
// the real one does (test/e2e/reconciler-rbac.test.ts is the proof on a real API server): every Role and binding vc
// renders is created without `escalate` or `bind`; custom resources only once the platform allows them; nothing more.
import { expect } from "chai";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadAll } from "js-yaml";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
const ROOT = resolve(import.meta.dirname, "..", "..");
const RECONCILER = "system:serviceaccount:vc-system:vc-reconciler";
const roles = loadAll(readFileSync(join(ROOT, "deploy", "reconciler", "rbac.yaml"), "utf8")) as Array<{
  kind: string;
  rules?: Rule[];
}>;
const HELD = roles.filter((o) => o.kind === "ClusterRole").flatMap((o) => o.rules ?? []);
const CUSTOM: Rule[] = [
  {
    apiGroups: ["example.com"],
    resources: ["widgets"],
    verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
  },
];

describe("reconciler RBAC (in-memory server, escalation prevention)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: string;
  const start = async (rules: Rule[]) => {
    server = await startKubeServer({ users: [{ token: "t-reconciler", name: RECONCILER, rules }] });
    // The bootstrap role the real server has, which this server does not seed. Without it a binding to cluster-admin
    // would be refused as a binding to a missing role (the role's 404, as the real server answers it), never reaching
    // the escalation check this file proves.
    server.put({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "cluster-admin" },
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    } as never);
    return server.writeKubeconfig({ token: "t-reconciler" });
  };
  before(() => {
    repo = mkdtempSync(join(tmpdir(), "vc-reconciler-rbac-"));
    cpSync(join(ROOT, "clusters"), join(repo, "clusters"), { recursive: true });
    mkdirSync(join(repo, "clusters", "extras"));
    writeFileSync(
      join(repo, "clusters", "extras", "values.yaml"),
      "sync:\n  toHost:\n    customResources:\n      widgets.example.com:\n        enabled: true\n",
    );
  });
  afterEach(async () => server?.close());
  after(() => rmSync(repo, { recursive: true, force: true }));

  it("creates every Role and binding vc renders; a custom resource only once the platform allows it", async () => {
    let kubeconfig = await start(HELD);
    const first = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
    expect(first.code, first.stdout + first.stderr).to.equal(2);
    const refused = server.requests.filter((r) => r.status === 403);
    expect(refused.length).to.be.greaterThan(0);
    expect(
      refused.every((r) => r.namespace === "vc-extras"),
      JSON.stringify(refused),
    ).to.equal(true);
    await server.close();

    kubeconfig = await start([...HELD, ...CUSTOM]);
    const res = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(server.requests.filter((r) => r.status >= 400 && r.status !== 404)).to.deep.equal([]);
    expect(server.countRequests({ method: "PATCH", resource: "roles" })).to.be.greaterThan(3);
  });

  it("cannot grant cluster-admin, wildcards, exec, RBAC verbs, impersonation, tokens or node writes", async () => {
    await start(HELD);
    const rbac = `${server.url}/apis/rbac.authorization.k8s.io/v1`;
    const post = (path: string, body: object) =>
      fetch(`${rbac}${path}`, {
        method: "POST",
        headers: { Authorization: "Bearer t-reconciler", "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const role = (name: string, rules: object[]) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: "kube-system" },
      rules,
    });
    const tenant = { kind: "ServiceAccount", name: "vc-extras", namespace: "vc-extras" };
    const attempts: Array<[string, object]> = [
      [
        "/clusterrolebindings",
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "evil" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [tenant],
        },
      ],
      [
        "/namespaces/kube-system/rolebindings",
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "evil", namespace: "kube-system" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [tenant],
        },
      ],
      ["/namespaces/kube-system/roles", role("evil-all", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }])],
      [
        "/namespaces/kube-system/roles",
        role("evil-secrets", [{ apiGroups: [""], resources: ["secrets"], verbs: ["*"] }]),
      ],
      [
        "/namespaces/kube-system/roles",
        role("evil-exec", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }]),
      ],
      [
        "/namespaces/kube-system/roles",
        role("evil-rbac", [
          {
            apiGroups: ["rbac.authorization.k8s.io"],
            resources: ["roles", "clusterroles"],
            verbs: ["escalate", "bind"],
          },
        ]),
      ],
      [
        "/clusterroles",
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "evil-impersonate" },
          rules: [{ apiGroups: [""], resources: ["users", "groups", "serviceaccounts"], verbs: ["impersonate"] }],
        },
      ],
      [
        "/namespaces/kube-system/roles",
        role("evil-token", [{ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }]),
      ],
      [
        "/clusterroles",
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "evil-nodes" },
          rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["patch", "delete"] }],
        },
      ],
    ];
    for (const [path, body] of attempts) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}: ${await res.text()}`).to.equal(403);
    }
  });
});
