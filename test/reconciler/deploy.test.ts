// deploy/reconciler: the manifests apply with the real kubectl, RBAC covers what vc writes and what it delegates, args are real flags.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { INVENTORY_TYPES } from "../../src/target/kube/target.js";
import { loadAndValidate, validSpecs } from "../../src/validate/index.js";
import { renderCluster } from "../../src/render/index.js";
import { buildProgram } from "../../src/cli/main.js";
import { startKubeServer } from "../support/kube-server/index.js";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const DIR = "deploy/reconciler";
const docs = (): KubeObject[] =>
  readdirSync(DIR)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .flatMap((f) => loadAll(readFileSync(join(DIR, f), "utf8")) as KubeObject[]);

function allows(rules: Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

describe("deploy/reconciler", function () {
  this.timeout(60_000);
  const objs = docs();
  const clusterRules = objs.filter((o) => o.kind === "ClusterRole").flatMap((o) => (o as unknown as { rules: Rule[] }).rules);

  it("grants every verb the reconciler uses on every kind it applies, lists and prunes", () => {
    for (const t of INVENTORY_TYPES) {
      for (const verb of ["get", "list", "create", "patch", "delete"]) {
        expect(allows(clusterRules, t.group, t.plural, verb), `${verb} ${t.group}/${t.plural}`).to.equal(true);
      }
    }
    const lease = objs.find((o) => o.kind === "Role" && o.metadata.name === "vc-reconciler-leader-election") as unknown as { rules: Rule[]; metadata: { namespace: string } };
    for (const verb of ["get", "create", "update"]) expect(allows(lease.rules, "coordination.k8s.io", "leases", verb)).to.equal(true);
  });

  it("may create the Roles vc renders through escalate and bind on roles and cluster roles only (no wildcard, nothing else)", async () => {
    const rbacRole = objs.find((o) => o.kind === "ClusterRole" && o.metadata.name === "vc-reconciler-rbac") as unknown as { rules: Rule[] };
    expect(rbacRole.rules).to.deep.equal([{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles", "clusterroles"], verbs: ["escalate", "bind"] }]);
    const others = objs.filter((o) => o.kind === "ClusterRole" && o.metadata.name !== "vc-reconciler-rbac").flatMap((o) => (o as unknown as { rules: Rule[] }).rules);
    expect(JSON.stringify(others)).to.not.match(/"escalate"|"bind"|"\*"/);
    const v = await loadAndValidate(".", {});
    const rendered = validSpecs(v).flatMap((s) => renderCluster(s, "x"));
    expect(rendered.filter((o) => o.kind === "Role" || o.kind === "ClusterRole").length).to.be.greaterThan(2);
  });

  it("runs vc reconcile with flags that exist, leader election, probes on the served paths", async () => {
    const dep = objs.find((o) => o.kind === "Deployment") as unknown as { spec: { replicas: number; template: { spec: { containers: Array<{ args: string[]; livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } } }> } } } };
    const c = dep.spec.template.spec.containers[0]!;
    expect(c.args[0]).to.equal("reconcile");
    const cmd = (await buildProgram()).commands.find((x) => x.name() === "reconcile")!;
    const known = new Set(cmd.options.map((o) => o.long));
    for (const a of c.args.filter((x) => x.startsWith("--"))) expect(known.has(a), a).to.equal(true);
    expect(c.args).to.include("--leader-elect");
    expect(dep.spec.replicas).to.be.greaterThan(1);
    expect(c.livenessProbe.httpGet.path).to.equal("/healthz");
    expect(c.readinessProbe.httpGet.path).to.equal("/readyz");
  });

  it("applies with the real kubectl (kustomize) against the API test server", async () => {
    const server = await startKubeServer();
    try {
      // Asynchronously: the test server runs in this process and must answer while kubectl waits.
      const { stdout: out } = await promisify(execFile)("kubectl", ["--kubeconfig", server.kubeconfigPath, "apply", "-k", DIR], { encoding: "utf8" });
      expect(out).to.include("deployment.apps/vc-reconciler created");
      expect(server.get("apps/v1", "Deployment", "vc-system", "vc-reconciler")).to.not.equal(undefined);
      expect(server.get("rbac.authorization.k8s.io/v1", "ClusterRole", undefined, "vc-reconciler-rbac")).to.not.equal(undefined);
    } finally {
      await server.close();
    }
  });
});
