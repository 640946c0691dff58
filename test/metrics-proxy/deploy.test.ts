// deploy/metrics-proxy/: the host's one shared proxy, as the platform applies it, agrees with the proxy's flags, with
// what each cluster's render points at, and grants no more than the proxy reads.
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { load, loadAll } from "js-yaml";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { renderMetricsProxy } from "../../src/render/metricsProxy.js";
import { SHARED_METRICS_PROXY, sharedMetricsProxyHost } from "../../src/translate/metrics-proxy.js";

const dir = new URL("../../deploy/metrics-proxy/", import.meta.url);
const docs = (file: string) => loadAll(readFileSync(new URL(file, dir), "utf8")) as any[];

describe("metrics-proxy deploy manifests (the shared proxy)", () => {
  it("lists every manifest of the folder in its kustomization", () => {
    const k = load(readFileSync(new URL("kustomization.yaml", dir), "utf8")) as { resources: string[] };
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
      .sort();
    expect([...k.resources].sort()).to.deep.equal(files);
  });

  it("runs two replicas of the shared form, on port 9001, with a replica key, probes and a budget", () => {
    const [deployment] = docs("deployment.yaml");
    expect(deployment.metadata).to.deep.include({
      name: SHARED_METRICS_PROXY.name,
      namespace: SHARED_METRICS_PROXY.namespace,
    });
    expect(deployment.spec.replicas).to.equal(2);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).to.equal(0);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).to.equal(SHARED_METRICS_PROXY.name);
    const container = pod.containers[0];
    const config = parseFlags(container.args);
    expect(config.mode.kind).to.equal("shared");
    expect(config.listen.port).to.equal(SHARED_METRICS_PROXY.port);
    expect(config.mode.kind === "shared" && config.mode.shared.statusConfigMap).to.deep.equal({
      namespace: SHARED_METRICS_PROXY.namespace,
      name: SHARED_METRICS_PROXY.statusConfigMap,
    });
    expect(container.env.find((e: any) => e.name === "POD_NAME").valueFrom.fieldRef.fieldPath).to.equal(
      "metadata.name",
    );
    expect(container.livenessProbe.httpGet.path).to.equal("/healthz");
    expect(container.readinessProbe.httpGet.path).to.equal("/readyz");
    expect(pod.volumes).to.deep.equal([{ name: "tls", secret: { secretName: SHARED_METRICS_PROXY.tlsSecret } }]);
    const [pdb] = docs("pdb.yaml");
    expect(pdb.spec.minAvailable).to.equal(1);
    expect(pdb.spec.selector.matchLabels).to.deep.equal(deployment.spec.selector.matchLabels);
  });

  it("is the Service every cluster's ExternalName names", () => {
    const [service] = docs("service.yaml");
    expect(`${service.metadata.name}.${service.metadata.namespace}.svc.cluster.local`).to.equal(
      sharedMetricsProxyHost(),
    );
    expect(service.spec.ports[0].port).to.equal(SHARED_METRICS_PROXY.port);
    const [cm] = docs("configmap.yaml");
    expect(cm.metadata).to.deep.include({
      name: SHARED_METRICS_PROXY.statusConfigMap,
      namespace: SHARED_METRICS_PROXY.namespace,
    });
  });

  it(
    "grants what the proxy reads and no Secret cluster-wide; each cluster's " +
      "Role names its Secret and binds this ServiceAccount",
    () => {
      const rbac = docs("rbac.yaml");
      const clusterRules = rbac.filter((o) => o.kind === "ClusterRole").flatMap((o) => o.rules);
      const can = (group: string, resource: string, verb: string) =>
        clusterRules.some(
          (r: any) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
        );
      for (const verb of ["list", "watch"]) {
        expect(can("", "pods", verb), `pods ${verb}`).to.equal(true);
        expect(can("", "namespaces", verb), `namespaces ${verb}`).to.equal(true);
      }
      for (const group of ["metrics.orch.io", "metrics.k8s.io"])
        for (const resource of ["pods", "nodes"])
          expect(can(group, resource, "get"), `${resource}.${group}`).to.equal(true);
      expect(
        clusterRules.some(
          (r: any) =>
            r.resources.includes("secrets") ||
            r.verbs.some((v: string) => v !== "get" && v !== "list" && v !== "watch"),
        ),
      ).to.equal(false);
      const status = rbac.find((o) => o.kind === "Role");
      expect(status.rules).to.deep.equal([
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [SHARED_METRICS_PROXY.statusConfigMap],
          verbs: ["get", "patch"],
        },
      ]);
      const [sa] = docs("serviceaccount.yaml");
      const binding = renderMetricsProxy("demo", "vc-demo").find((o) => o.kind === "RoleBinding")!;
      expect(binding.subjects).to.deep.equal([
        { kind: "ServiceAccount", name: sa.metadata.name, namespace: sa.metadata.namespace },
      ]);
    },
  );
});
