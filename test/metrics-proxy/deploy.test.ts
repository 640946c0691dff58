import { expect } from "chai";
import { readFileSync } from "node:fs";
import { loadAll } from "js-yaml";
import { renderFiles } from "../../deploy/metrics-proxy/render.js";
import { parseFlags } from "../../src/metrics-proxy/config.js";

const dir = new URL("../../deploy/metrics-proxy/", import.meta.url);

describe("metrics-proxy deploy manifests", () => {
  it("are what renderMetricsProxy renders (regenerate with node --import tsx deploy/metrics-proxy/render.ts)", () => {
    for (const [file, text] of Object.entries(renderFiles())) {
      expect(readFileSync(new URL(file, dir), "utf8"), file).to.equal(text);
    }
  });

  it("run the proxy with flags it accepts, on port 9001, probing /healthz and /readyz", () => {
    const [deployment] = loadAll(readFileSync(new URL("deployment.yaml", dir), "utf8")) as any[];
    const container = deployment.spec.template.spec.containers[0];
    const config = parseFlags(container.args);
    expect(config.listen.port).to.equal(9001);
    expect(config.tlsCert).to.be.a("string");
    expect(config.mode).to.deep.include({ kind: "single" });
    expect(config.mode.kind === "single" && config.mode.single.cluster).to.equal("example");
    expect(container.livenessProbe.httpGet.path).to.equal("/healthz");
    expect(container.readinessProbe.httpGet.path).to.equal("/readyz");
    const [service] = loadAll(readFileSync(new URL("service.yaml", dir), "utf8")) as any[];
    expect(service.spec.ports[0].port).to.equal(9001);
  });

  it("grant read access to host pods, nodes and both host metrics resources", () => {
    const rbac = loadAll(readFileSync(new URL("rbac.yaml", dir), "utf8")) as any[];
    const rules = rbac.filter((o) => o.kind === "Role" || o.kind === "ClusterRole").flatMap((o) => o.rules);
    const can = (group: string, resource: string, verb: string) =>
      rules.some((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    for (const verb of ["list", "watch"]) expect(can("", "pods", verb), `pods ${verb}`).to.equal(true);
    expect(can("", "nodes", "list")).to.equal(true);
    expect(can("metrics.orch.io", "pods", "list")).to.equal(true);
    expect(can("metrics.orch.io", "nodes", "list")).to.equal(true);
  });
});
