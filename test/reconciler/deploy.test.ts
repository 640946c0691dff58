// deploy/reconciler: the manifests apply with the real kubectl, RBAC covers what vc writes and what it delegates, args
// are real flags.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { INVENTORY_TYPES } from "../../src/sinks/kube/target.js";
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

/**
 * A cluster with every switch that adds to a rendered Role on (no custom resources: those are the platform's to allow).
 */
const ALL_ON = `sync:
  toHost:
    pods:
      enabled: true
    services:
      enabled: true
    persistentVolumeClaims:
      enabled: true
  fromHost:
    nodes:
      enabled: true
integrations:
  metricsServer:
    enabled: true
    pods: true
    nodes: true
    proxy:
      hostApiGroup: GROUP
  certManager:
    enabled: true
  mesh:
    enabled: true
`;
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
  const clusterRules = objs
    .filter((o) => o.kind === "ClusterRole")
    .flatMap((o) => (o as unknown as { rules: Rule[] }).rules);

  it("grants every verb the reconciler uses on every kind it applies, lists and prunes", () => {
    for (const t of INVENTORY_TYPES) {
      for (const verb of ["get", "list", "create", "patch", "delete"]) {
        expect(allows(clusterRules, t.group, t.plural, verb), `${verb} ${t.group}/${t.plural}`).to.equal(true);
      }
    }
    const lease = objs.find(
      (o) => o.kind === "Role" && o.metadata.name === "vc-reconciler-leader-election",
    ) as unknown as { rules: Rule[]; metadata: { namespace: string } };
    for (const verb of ["get", "create", "update"])
      expect(allows(lease.rules, "coordination.k8s.io", "leases", verb)).to.equal(true);
  });

  it(
    "holds every permission the Roles vc renders grant, so it needs no escalate and no bind (and has neither, nor " +
      "a wildcard)",
    async () => {
      expect(JSON.stringify(clusterRules)).to.not.match(/"escalate"|"bind"|"impersonate"|"\*"/);
      // Every switch that adds to a rendered Role or ClusterRole, on, with both metrics groups vc knows.
      const repo = mkdtempSync(join(tmpdir(), "vc-deploy-rbac-"));
      try {
        cpSync("clusters", join(repo, "clusters"), { recursive: true });
        for (const [name, group] of [
          ["all-on", "metrics.orch.io"],
          ["all-on-k8s", "metrics.k8s.io"],
        ] as const) {
          mkdirSync(join(repo, "clusters", name));
          writeFileSync(join(repo, "clusters", name, "values.yaml"), ALL_ON.replace("GROUP", group));
        }
        const v = await loadAndValidate(repo, {});
        const errors = v.diagnostics.filter((d) => d.severity === "error");
        expect(errors, JSON.stringify(errors)).to.deep.equal([]);
        expect(validSpecs(v).map((spec) => spec.name)).to.include.members(["all-on", "all-on-k8s"]);
        const rendered = validSpecs(v).flatMap((spec) => renderCluster(spec, "x"));
        const roles = rendered.filter((o) => o.kind === "Role" || o.kind === "ClusterRole") as unknown as Array<{
          kind: string;
          metadata: { name: string };
          rules: Rule[];
        }>;
        expect(roles.length).to.be.greaterThan(6);
        const granted = JSON.stringify(roles.map((r) => r.rules));
        for (const what of [
          "networking.mesh.io",
          "cert-manager.io",
          "leases",
          "nodes",
          "metrics.k8s.io",
          "metrics.orch.io",
          "endpoints",
          "persistentvolumeclaims",
        ])
          expect(granted).to.include(what);
        for (const role of roles) {
          for (const rule of role.rules) {
            for (const group of rule.apiGroups)
              for (const resource of rule.resources)
                for (const verb of rule.verbs) {
                  expect(
                    allows(clusterRules, group, resource, verb),
                    `${role.kind} ${role.metadata.name}: ${verb} ${group}/${resource}`,
                  ).to.equal(true);
                }
          }
        }
      } finally {
        rmSync(repo, { recursive: true, force: true });
      }
    },
  );

  it("runs vc reconcile with flags that exist, leader election, probes on the served paths", async () => {
    const dep = objs.find((o) => o.kind === "Deployment") as unknown as {
      spec: {
        replicas: number;
        template: {
          spec: {
            containers: Array<{
              args: string[];
              livenessProbe: { httpGet: { path: string } };
              readinessProbe: { httpGet: { path: string } };
            }>;
          };
        };
      };
    };
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
      const { stdout: out } = await promisify(execFile)(
        "kubectl",
        ["--kubeconfig", server.kubeconfigPath, "apply", "-k", DIR],
        { encoding: "utf8" },
      );
      expect(out).to.include("deployment.apps/vc-reconciler created");
      expect(server.get("apps/v1", "Deployment", "vc-system", "vc-reconciler")).to.not.equal(undefined);
      expect(server.get("rbac.authorization.k8s.io/v1", "ClusterRole", undefined, "vc-reconciler-grants")).to.not.equal(
        undefined,
      );
    } finally {
      await server.close();
    }
  });
});
