import { expect } from "chai";
import { loadAll } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { renderCluster } from "../../src/render/index.js";
import { renderMetricsProxy } from "../../src/render/metricsProxy.js";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { ANNOTATIONS } from "../../src/translate/index.js";
import { at, defaultValues, find, makeSpec, must } from "./fixtures.js";

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

  it("runs the proxy with its documented flags", () => {
    const objs = render((v) => {
      metricsOn(v);
      v.integrations.metricsServer.proxy.cacheTTL = "30s";
      v.integrations.metricsServer.proxy.replicas = 2;
    });
    const dep = must(objs, "Deployment", P);
    expect(at(dep, "spec.replicas")).to.equal(2);
    const c = at(dep, "spec.template.spec.containers.0");
    expect(c.image).to.equal("ghcr.io/vc-project/metrics-proxy:0.1.0");
    expect(c.args).to.deep.equal([
      "--cluster",
      C,
      "--host-namespace",
      HNS,
      "--listen",
      ":9001",
      "--tls-cert",
      "/etc/vc-metrics-proxy/tls/tls.crt",
      "--tls-key",
      "/etc/vc-metrics-proxy/tls/tls.key",
      "--virtual-kubeconfig",
      "/etc/vc-metrics-proxy/virtual/config",
      "--virtual-server",
      `https://${C}.${HNS}.svc:443`,
      "--api-group",
      "metrics.orch.io",
      "--host-api-group",
      "metrics.orch.io",
      "--cache-ttl",
      "30s",
      "--nodes",
      "synced",
    ]);
    expect(at(dep, "spec.template.spec.volumes")).to.deep.equal([
      { name: "tls", secret: { secretName: `vc-metrics-proxy-tls-${C}` } },
      { name: "virtual-kubeconfig", secret: { secretName: `vc-${C}`, items: [{ key: "config", path: "config" }] } },
    ]);
    // The proxy accepts its rendered command line, in the authenticated (front-proxy) form.
    const config = parseFlags(c.args);
    expect(config).to.include({
      virtualKubeconfig: "/etc/vc-metrics-proxy/virtual/config",
      apiService: "v1beta1.metrics.orch.io",
    });
    expect(config.clientCA).to.equal(undefined);
    expect(config.tokenFile).to.equal(undefined);
    expect(at(dep, "spec.template.spec.serviceAccountName")).to.equal(P);
    expect(at(dep, "spec.selector.matchLabels")).to.deep.equal({ release: C, app: "vc-metrics-proxy" });
  });

  it("always declares requests and limits (a quota'd host namespace rejects pods without them) and the measured V8 options", () => {
    const container = (quota: boolean) =>
      at(
        must(
          render((v) => {
            metricsOn(v);
            v.policies.resourceQuota = { enabled: quota, quota: { "limits.cpu": "8", "requests.memory": "8Gi" } };
          }),
          "Deployment",
          P,
        ),
        "spec.template.spec.containers.0",
      );
    const resources = { requests: { cpu: "50m", memory: "80Mi" }, limits: { cpu: "500m", memory: "160Mi" } };
    expect(container(true).resources).to.deep.equal(resources);
    expect(container(false).resources).to.deep.equal(resources);
    expect(container(false).env).to.deep.equal([{ name: "NODE_OPTIONS", value: "--max-semi-space-size=2" }]);
  });

  it("serves all nodes only when node sync is on with all", () => {
    const nodes = (enabled: boolean, all: boolean) => {
      const objs = render((v) => {
        metricsOn(v);
        v.sync.fromHost.nodes = { enabled, all };
      });
      const args: string[] = at(must(objs, "Deployment", P), "spec.template.spec.containers.0.args");
      return args[args.indexOf("--nodes") + 1];
    };
    expect(nodes(true, true)).to.equal("all");
    expect(nodes(true, false)).to.equal("synced");
    expect(nodes(false, true)).to.equal("synced");
  });

  it("exposes port 9001 and grants reads of host pods, nodes and the host metrics API", () => {
    const objs = render(metricsOn);
    expect(at(must(objs, "Service", P), "spec.ports")).to.deep.equal([
      { name: "https", port: 9001, targetPort: 9001, protocol: "TCP" },
    ]);
    expect(must(objs, "ServiceAccount", P).metadata.namespace).to.equal(HNS);
    expect(must(objs, "Role", P).rules).to.deep.equal([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["metrics.orch.io"], resources: ["pods"], verbs: ["get", "list", "watch"] },
    ]);
    expect(must(objs, "RoleBinding", P).subjects).to.deep.equal([{ kind: "ServiceAccount", name: P, namespace: HNS }]);
    const cr = must(objs, "ClusterRole", `${P}-x-${HNS}`);
    expect(cr.rules).to.deep.equal([
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["metrics.orch.io"], resources: ["nodes"], verbs: ["get", "list", "watch"] },
    ]);
    expect(must(objs, "ClusterRoleBinding", `${P}-x-${HNS}`).roleRef).to.deep.include({
      kind: "ClusterRole",
      name: `${P}-x-${HNS}`,
    });
  });

  it("reads (and is granted) the host metrics API group of the values, e.g. the upstream metrics.k8s.io", () => {
    const objs = render((v) => {
      metricsOn(v);
      v.integrations.metricsServer.proxy.hostApiGroup = "metrics.k8s.io";
    });
    const args: string[] = at(must(objs, "Deployment", P), "spec.template.spec.containers.0.args");
    expect(args[args.indexOf("--host-api-group") + 1]).to.equal("metrics.k8s.io");
    expect(args[args.indexOf("--api-group") + 1]).to.equal("metrics.orch.io");
    expect(at(must(objs, "Role", P), "rules.1")).to.deep.equal({
      apiGroups: ["metrics.k8s.io"],
      resources: ["pods"],
      verbs: ["get", "list", "watch"],
    });
    expect(at(must(objs, "ClusterRole", `${P}-x-${HNS}`), "rules.1")).to.deep.equal({
      apiGroups: ["metrics.k8s.io"],
      resources: ["nodes"],
      verbs: ["get", "list", "watch"],
    });
  });

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

  it("is exported on its own for the deploy/ examples, without source annotations unless given", () => {
    const values = defaultValues();
    const bare = renderMetricsProxy("demo", "vc-demo", values);
    expect(bare.map((o) => o.kind).sort()).to.deep.equal([
      "ClusterRole",
      "ClusterRoleBinding",
      "Deployment",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    expect(bare.every((o) => o.metadata.annotations === undefined)).to.equal(true);
    const sourced = renderMetricsProxy("demo", "vc-demo", values, {
      sourceFile: "clusters/demo/values.yaml",
      revision: "r",
    });
    expect(sourced.every((o) => o.metadata.annotations?.[ANNOTATIONS.revision] === "r")).to.equal(true);
  });
});
