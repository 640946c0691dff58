import { expect } from "chai";
import type { PolicyRule } from "../../src/render/rbac.js";
import { renderCluster } from "../../src/render/index.js";
import { find, makeSpec, must, withMesh } from "./fixtures.js";

const C = "team-a";
const render = (edit?: Parameters<typeof makeSpec>[1]) => renderCluster(makeSpec(C, edit), "rev1");
const rules = (edit?: Parameters<typeof makeSpec>[1]) => must(render(edit), "Role", `vc-${C}`).rules as PolicyRule[];

/** Every (group, resource) pair granted with the given verb. */
function granted(rs: PolicyRule[], verb: string): string[] {
  return rs
    .filter((r) => r.verbs.includes(verb))
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`)))
    .sort();
}

describe("render/rbac", () => {
  it("binds the Role vc-<cluster> to the ServiceAccount vc-<cluster> of the host namespace", () => {
    const rb = must(render(), "RoleBinding", `vc-${C}`);
    expect(rb.roleRef).to.deep.equal({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `vc-${C}` });
    expect(rb.subjects).to.deep.equal([{ kind: "ServiceAccount", name: `vc-${C}`, namespace: `vc-${C}` }]);
  });

  it("lets the syncer create and manage pods while pod sync is on (spec 5.3)", () => {
    expect(granted(rules(), "create")).to.include.members(["/pods", "/pods/status"]);
    expect(
      granted(
        rules((v) => (v.sync.toHost.pods.enabled = false)),
        "create",
      ),
    ).to.not.include("/pods");
  });

  it("grants services and volume claims only while their switches are on", () => {
    expect(granted(rules(), "create")).to.include.members(["/services", "/persistentvolumeclaims"]);
    const off = granted(
      rules((v) => {
        v.sync.toHost.services.enabled = false;
        v.sync.toHost.persistentVolumeClaims.enabled = false;
      }),
      "create",
    );
    expect(off).to.not.include("/services");
    expect(off).to.not.include("/persistentvolumeclaims");
  });

  it("grants each enabled custom resource by its <plural>.<group> key, not the disabled ones", () => {
    const rs = rules((v) => {
      v.sync.toHost.customResources = {
        "certificates.cert-manager.io": { enabled: true },
        "widgets.example.com": { enabled: false },
      };
    });
    expect(granted(rs, "update")).to.include("cert-manager.io/certificates");
    expect(granted(rs, "get")).to.not.include("example.com/widgets");
  });

  it("grants the mesh kinds whose switches are on, only while the integration is on", () => {
    expect(granted(rules(), "get").filter((g) => g.startsWith("networking.mesh.io"))).to.deep.equal([]);
    const rs = rules((v) => {
      withMesh(v);
      v.integrations.mesh.sync.toHost.gateways.enabled = false;
    });
    expect(granted(rs, "create").filter((g) => g.startsWith("networking.mesh.io"))).to.deep.equal([
      "networking.mesh.io/destinationrules",
      "networking.mesh.io/virtualservices",
    ]);
  });

  it(
    "lets the syncer manage cert-manager certificates and read secrets only while the certificate-manager " +
      "integration is on",
    () => {
      expect(granted(rules(), "get").filter((g) => g.startsWith("cert-manager.io"))).to.deep.equal([]);
      const on = rules((v) => (v.integrations.certManager.enabled = true));
      for (const verb of ["create", "get", "list", "watch", "update", "patch", "delete"])
        expect(granted(on, verb), verb).to.include("cert-manager.io/certificates");
      // Pod sync already manages secrets; without it the syncer still reads the Secrets cert-manager issues, and no
      // more.
      expect(granted(on, "create")).to.include("/secrets");
      const noPods = rules((v) => {
        v.integrations.certManager.enabled = true;
        v.sync.toHost.pods.enabled = false;
      });
      expect(granted(noPods, "get")).to.include("/secrets");
      expect(granted(noPods, "create")).to.not.include("/secrets");
      expect(
        granted(
          rules((v) => (v.sync.toHost.pods.enabled = false)),
          "get",
        ),
      ).to.not.include("/secrets");
    },
  );

  it("lets the control plane read the metrics API only while the metrics integration is on", () => {
    expect(granted(rules(), "get")).to.not.include("metrics.orch.io/pods");
    const rs = rules((v) => (v.integrations.metricsServer.enabled = true));
    expect(granted(rs, "get")).to.include("metrics.orch.io/pods");
    expect(granted(rs, "create")).to.not.include("metrics.orch.io/pods");
    // The host's metrics group as configured: what the host's metrics server serves.
    const upstream = rules((v) => {
      v.integrations.metricsServer.enabled = true;
      v.integrations.metricsServer.proxy.hostApiGroup = "metrics.k8s.io";
    });
    expect(granted(upstream, "get")).to.include("metrics.k8s.io/pods").and.not.include("metrics.orch.io/pods");
  });

  it("reads host nodes through a ClusterRole only while node sync is on", () => {
    expect(find(render(), "ClusterRole")).to.equal(undefined);
    const objs = render((v) => (v.sync.fromHost.nodes.enabled = true));
    const cr = must(objs, "ClusterRole", `vc-${C}-x-vc-${C}`);
    expect(cr.rules).to.deep.equal([{ apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] }]);
    expect(must(objs, "ClusterRoleBinding", `vc-${C}-x-vc-${C}`).subjects).to.deep.equal([
      { kind: "ServiceAccount", name: `vc-${C}`, namespace: `vc-${C}` },
    ]);
  });
});
