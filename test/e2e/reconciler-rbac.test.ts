// The reconciler's own identity (deploy/reconciler/rbac.yaml, a real ServiceAccount token) on a real API server, which
// enforces RBAC escalation prevention: without `escalate` or `bind` it creates every Role, ClusterRole and binding vc
// renders (custom resources once the platform allows them), and cannot grant more than that.
import { expect } from "chai";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";
import type { KubeObject } from "../../src/kube/object.js";
import { readClusterHealth } from "../../src/health/read.js";
import { KubeClient } from "../../src/host/client.js";

const ROOT = join(import.meta.dirname, "..", "..");

const EXTRA_VALUES = `sync:
  toHost:
    customResources:
      widgets.example.com:
        enabled: true
      backups.velero.io:
        enabled: true
integrations:
  metricsServer:
    enabled: true
    pods: true
    nodes: true
    proxy:
      hostApiGroup: metrics.k8s.io
`;

describe("e2e: the reconciler's RBAC on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-e2e-rbac-"));
    cpSync(join(ROOT, "clusters"), join(repo, "clusters"), { recursive: true });
    mkdirSync(join(repo, "clusters", "extras"));
    writeFileSync(join(repo, "clusters", "extras", "values.yaml"), EXTRA_VALUES);
    await installExampleCrds(kube());
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  const writer = "system:serviceaccount:vc-system:vc-reconciler";
  let kubeconfig: string;
  let token: string;
  before(async () => {
    kubeconfig = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    token = (load(readFileSync(kubeconfig, "utf8")) as { users: Array<{ user: { token: string } }> }).users[0]!.user
      .token;
  });

  it(
    "as its ServiceAccount, applies every cluster, creating every Role, ClusterRole and binding vc renders; " +
      "custom resources once the platform allows them",
    async () => {
      // Custom resources are not in vc-reconciler-grants: the server refuses that cluster's Role, the others apply.
      const first = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
      expect(first.code, first.stdout + first.stderr).to.equal(2);
      const refused = kube()
        .writes(writer)
        .filter((w) => w.code >= 400);
      expect(refused.length).to.be.greaterThan(0);
      expect(
        refused.every((w) => w.namespace === "vc-extras" && (w.resource === "roles" || w.resource === "rolebindings")),
        JSON.stringify(refused),
      ).to.equal(true);
      expect(refused.map((w) => w.code)).to.include(403);
      expect(first.stdout).to.match(/cluster minimal: \d+ created/);

      // The platform allows them, as docs/production.md says: a ClusterRole with those rules, bound to the reconciler.
      const allowed = await kube().kubectl(["apply", "-f", "-"], { input: PLATFORM_ALLOWS });
      expect(allowed.code, allowed.stderr).to.equal(0);
      const before = kube().writes(writer).length;
      const res = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      const writes = kube().writes(writer).slice(before);
      expect(
        writes.filter((w) => w.code >= 400),
        JSON.stringify(writes.filter((w) => w.code >= 400)),
      ).to.deep.equal([]);
      const roles = kube()
        .writes(writer)
        .filter((w) => (w.resource === "roles" || w.resource === "clusterroles") && w.code < 400);
      expect(roles.length).to.be.greaterThan(3);
      const extras = await kube().kubectl(["-n", "vc-extras", "get", "roles", "-o", "json"]);
      const rules = JSON.stringify(JSON.parse(extras.stdout).items.map((r: { rules: unknown }) => r.rules));
      expect(rules).to.include("widgets").and.include("velero.io").and.include("metrics.k8s.io");
      const bindings = await kube().kubectl(["-n", "vc-extras", "get", "rolebindings", "-o", "name"]);
      expect(bindings.stdout.trim().split("\n").length).to.be.greaterThan(1);
    },
  );

  it(
    "as its ServiceAccount, cannot grant more than vc renders: cluster-admin, wildcards, exec, impersonation, " +
      "RBAC verbs, tokens",
    async () => {
      const post = (path: string, body: object) => kube().request("POST", path, body, { token });
      const rbac = "/apis/rbac.authorization.k8s.io/v1";
      const role = (name: string, rules: object[]) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace: "kube-system" },
        rules,
      });
      const tenant = { kind: "ServiceAccount", name: "vc-extras", namespace: "vc-extras" };
      const attempts: Array<[string, string, object]> = [
        [
          "cluster-admin to a tenant, cluster-wide",
          `${rbac}/clusterrolebindings`,
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "evil" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [tenant],
          },
        ],
        [
          "cluster-admin to a tenant in kube-system",
          `${rbac}/namespaces/kube-system/rolebindings`,
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "evil", namespace: "kube-system" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [tenant],
          },
        ],
        [
          "a wildcard Role in kube-system",
          `${rbac}/namespaces/kube-system/roles`,
          role("evil-all", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]),
        ],
        [
          "every verb on secrets in kube-system",
          `${rbac}/namespaces/kube-system/roles`,
          role("evil-secrets", [{ apiGroups: [""], resources: ["secrets"], verbs: ["*"] }]),
        ],
        [
          "pods/exec",
          `${rbac}/namespaces/kube-system/roles`,
          role("evil-exec", [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }]),
        ],
        [
          "escalate and bind",
          `${rbac}/namespaces/kube-system/roles`,
          role("evil-rbac", [
            {
              apiGroups: ["rbac.authorization.k8s.io"],
              resources: ["roles", "clusterroles"],
              verbs: ["escalate", "bind"],
            },
          ]),
        ],
        [
          "impersonation",
          `${rbac}/clusterroles`,
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "evil-impersonate" },
            rules: [{ apiGroups: [""], resources: ["users", "groups", "serviceaccounts"], verbs: ["impersonate"] }],
          },
        ],
        [
          "service account tokens",
          `${rbac}/namespaces/kube-system/roles`,
          role("evil-token", [{ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }]),
        ],
        [
          "node writes",
          `${rbac}/clusterroles`,
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "evil-nodes" },
            rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["patch", "delete"] }],
          },
        ],
      ];
      for (const [what, path, body] of attempts) {
        const res = await post(path, body);
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(403);
      }
      for (const name of ["evil-all", "evil-secrets", "evil-exec", "evil-rbac", "evil-token"]) {
        expect((await kube().request("GET", `${rbac}/namespaces/kube-system/roles/${name}`)).status, name).to.equal(
          404,
        );
      }
      // The residual power (docs/security-model.md): what the reconciler holds, it can grant anywhere, e.g. reading
      // Secrets in kube-system, which it can read itself (it lists vc's Secrets fleet-wide by label).
      const residual = await post(
        `${rbac}/namespaces/kube-system/roles`,
        role("residual-secrets", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]),
      );
      expect(residual.status, JSON.stringify(residual.body)).to.equal(201);
      await kube().request("DELETE", `${rbac}/namespaces/kube-system/roles/residual-secrets`);
    },
  );

  it(
    "as its ServiceAccount, reads each cluster's health (pods, claims, events); health adds no power: no " +
      "impersonation, no tokens, no writes to nodes",
    async () => {
      const kubeconfig = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
      const rendered = JSON.parse((await runVc(["render", repo, "--cluster", "minimal", "-o", "json"])).stdout) as {
        items: KubeObject[];
      };
      const h = await readClusterHealth(KubeClient.open({ kubeconfig }), "vc-minimal", rendered.items);
      // No controller runs here: the StatefulSet is not yet reported, and nothing was forbidden.
      expect(h.status, JSON.stringify(h)).to.equal("Progressing");
      expect(JSON.stringify(h)).not.to.include("forbidden");
      // Asked as the ServiceAccount itself (its own token): pods and pods/status it may write already, as
      // vc-reconciler-grants holds what the syncer's rendered Role grants (the residual power docs/security-model.md
      // states); reading health needs no more than that.
      const can = async (...args: string[]) =>
        (await kube().kubectl(["--kubeconfig", kubeconfig, "auth", "can-i", ...args])).stdout.trim();
      expect(await can("get", "pods", "-n", "vc-minimal")).to.equal("yes");
      expect(await can("impersonate", "users")).to.equal("no");
      // (kubectl reads "serviceaccounts/token" as a ServiceAccount named token: the subresource is its own flag.)
      expect(await can("create", "serviceaccounts", "--subresource=token", "-n", "vc-minimal")).to.equal("no");
      expect(await can("create", "pods", "--subresource=exec", "-n", "vc-minimal")).to.equal("no");
      expect(await can("patch", "nodes")).to.equal("no");
    },
  );
});

/** What a platform adds to allow the custom resources its clusters sync (docs/production.md). */
const PLATFORM_ALLOWS = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: vc-reconciler-grants-custom
rules:
  - apiGroups: [example.com]
    resources: [widgets]
    verbs: [get, list, watch, create, patch, update, delete]
  - apiGroups: [velero.io]
    resources: [backups]
    verbs: [get, list, watch, create, patch, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: vc-reconciler-grants-custom
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: vc-reconciler-grants-custom
subjects:
  - kind: ServiceAccount
    name: vc-reconciler
    namespace: vc-system
`;
