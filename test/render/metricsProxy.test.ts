import { expect } from "chai";
import { loadAll } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { renderMetricsProxy } from "../../src/render/metricsProxy.js";
import { ANNOTATIONS } from "../../src/translate/index.js";
import { at, type defaultValues, find, makeSpec, must } from "./fixtures.js";

const C = "team-a";
const HNS = "vc-team-a";
const P = `vc-metrics-proxy-${C}`;
const metricsOn = (v: ReturnType<typeof defaultValues>) => (v.integrations.metricsServer.enabled = true);
const render = (edit?: Parameters<typeof makeSpec>[1]) => renderCluster(makeSpec(C, edit), "rev1");

describe("render/metrics proxy", () => {
  it("renders nothing of the proxy while the integration is off", () => {
    const objs = render();
    expect(find(objs, "Deployment")).to.equal(undefined);
    expect(find(objs, "ConfigMap")).to.equal(undefined);
    expect(objs.some((o) => o.metadata.name.startsWith("vc-metrics-proxy"))).to.equal(false);
    expect(
      at(must(objs, "StatefulSet"), "spec.template.spec.containers.0.args").some((a: string) =>
        a.startsWith("--init-manifests"),
      ),
    ).to.equal(false);
  });

  it("renders no proxy of its own: the cluster's Service names the host's shared proxy (an ExternalName)", () => {
    const objs = render(metricsOn);
    expect(find(objs, "Deployment")).to.equal(undefined);
    expect(find(objs, "ServiceAccount", P)).to.equal(undefined);
    expect(find(objs, "ClusterRole")).to.equal(undefined);
    expect(find(objs, "ClusterRoleBinding")).to.equal(undefined);
    const svc = must(objs, "Service", P);
    expect(svc.metadata.namespace).to.equal(HNS);
    expect(svc.spec).to.deep.equal({
      type: "ExternalName",
      externalName: "vc-metrics-proxy.vc-system.svc.cluster.local",
      ports: [{ name: "https", port: 9001, protocol: "TCP" }],
    });
  });

  it(
    "lets the shared proxy's ServiceAccount read the cluster's kubeconfig " +
      "Secret and its old proxy's Deployment, by name only",
    () => {
      const objs = render(metricsOn);
      const access = `vc-metrics-proxy-access-${C}`;
      expect(must(objs, "Role", access).metadata.namespace).to.equal(HNS);
      expect(must(objs, "Role", access).rules).to.deep.equal([
        { apiGroups: [""], resources: ["secrets"], resourceNames: [`vc-${C}`], verbs: ["get"] },
        { apiGroups: ["apps"], resources: ["deployments"], resourceNames: [P], verbs: ["get"] },
      ]);
      const binding = must(objs, "RoleBinding", access);
      expect(binding.roleRef).to.deep.equal({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: access });
      expect(binding.subjects).to.deep.equal([
        { kind: "ServiceAccount", name: "vc-metrics-proxy", namespace: "vc-system" },
      ]);
    },
  );

  it(
    "marks the host Namespace for the shared proxy with the nodes the " +
      "cluster sees: all only when node sync is on with all",
    () => {
      const mark = (enabled: boolean, all: boolean, metrics = true) =>
        must(
          render((v) => {
            if (metrics) metricsOn(v);
            v.sync.fromHost.nodes = { enabled, all };
          }),
          "Namespace",
        ).metadata.labels?.["vc.orch.io/metrics-proxy"];
      expect(mark(true, true)).to.equal("all");
      expect(mark(true, false)).to.equal("synced");
      expect(mark(false, true)).to.equal("synced");
      expect(mark(true, true, false)).to.equal(undefined);
    },
  );

  it("carries the APIService for the virtual side inside a ConfigMap, never as a host object", () => {
    const objs = render(metricsOn);
    expect(find(objs, "APIService")).to.equal(undefined);
    const cm = must(objs, "ConfigMap", `vc-init-${C}`);
    const docs = loadAll((cm.data as Record<string, string>)["manifests.yaml"]!) as KubeObject[];
    const api = docs.find((d) => d.kind === "APIService")!;
    expect(api.metadata.name).to.equal("v1beta1.metrics.orch.io");
    expect(at(api, "spec.group")).to.equal("metrics.orch.io");
    expect(at(api, "spec.version")).to.equal("v1beta1");
    expect(at(api, "spec.service")).to.deep.equal({ namespace: "kube-system", name: "vc-metrics-proxy", port: 9001 });
    // The aggregator verifies the proxy: the proxy writes its CA into caBundle; nothing skips verification.
    expect(at(api, "spec.insecureSkipTLSVerify")).to.equal(undefined);
    expect(at(api, "spec.caBundle")).to.equal(undefined);
    const svc = docs.find((d) => d.kind === "Service")!;
    expect(at(svc, "spec.externalName")).to.equal(`${P}.${HNS}.svc.cluster.local`);
    const args: string[] = at(must(objs, "StatefulSet"), "spec.template.spec.containers.0.args");
    expect(args).to.include("--init-manifests=/etc/vc/init/manifests.yaml");
  });

  it("is exported on its own, without source annotations unless given", () => {
    const bare = renderMetricsProxy("demo", "vc-demo");
    expect(bare.map((o) => `${o.kind}/${o.metadata.name}`).sort()).to.deep.equal([
      "Role/vc-metrics-proxy-access-demo",
      "RoleBinding/vc-metrics-proxy-access-demo",
      "Service/vc-metrics-proxy-demo",
    ]);
    expect(bare.every((o) => o.metadata.annotations === undefined)).to.equal(true);
    const sourced = renderMetricsProxy("demo", "vc-demo", { sourceFile: "clusters/demo/values.yaml", revision: "r" });
    expect(sourced.every((o) => o.metadata.annotations?.[ANNOTATIONS.revision] === "r")).to.equal(true);
  });
});
