import { expect } from "chai";
import { formatDiagnostic } from "../../src/model/diagnostic.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { cleanupRepos, makeRepo, MESH_ON } from "./fixture.js";

const vs = (hosts: string[], destination: string, mirror?: string) => `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: web
  namespace: shop
spec:
  hosts:
${hosts.map((h) => `    - "${h}"`).join("\n")}
  http:
    - route:
        - destination:
            host: "${destination}"
${mirror ? `      mirror:\n        host: "${mirror}"\n` : ""}`;

const dr = (host: string) => `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: web
  namespace: shop
spec:
  host: "${host}"
`;

const lines = (r: Awaited<ReturnType<typeof loadAndValidate>>) => r.diagnostics.map(formatDiagnostic);

describe("validate: mesh host forms (translated, external, or refused)", () => {
  after(cleanupRepos);

  it(
    "refuses wildcard, four-label and other-domain forms that name another namespace and cannot be " + "translated",
    async () => {
      const r = await loadAndValidate(
        makeRepo({
          "clusters/a/values.yaml": MESH_ON,
          "clusters/a/mesh/wild.yaml": vs(["*.team-x.svc.cluster.local"], "web"),
          "clusters/a/mesh/four.yaml": vs(["web"], "db.team-x.svc.cluster").replace("name: web", "name: four"),
          "clusters/a/mesh/other.yaml": vs(["web"], "web", "db.team-x.svc.other.domain").replace(
            "name: web",
            "name: other",
          ),
          "clusters/a/mesh/dr.yaml": dr("*.svc.cluster.local"),
        }),
      );
      const errors = lines(r).filter((l) => l.includes("error"));
      expect(errors).to.deep.equal([
        'clusters/a/mesh/dr.yaml:7:9: error: DestinationRule shop/web: the wildcard "*.svc.cluster.local" spans cluster services, which cannot be translated to this cluster\'s host names: name each service',
        'clusters/a/mesh/four.yaml:12:19: error: VirtualService shop/four: "db.team-x.svc.cluster" names service db in namespace team-x under the domain "cluster", which vc does not translate: write db.team-x.svc.cluster.local',
        'clusters/a/mesh/other.yaml:14:15: error: VirtualService shop/other: "db.team-x.svc.other.domain" names service db in namespace team-x under the domain "other.domain", which vc does not translate: write db.team-x.svc.cluster.local',
        'clusters/a/mesh/wild.yaml:8:7: error: VirtualService shop/web: the wildcard "*.team-x.svc.cluster.local" spans cluster services, which cannot be translated to this cluster\'s host names: name each service',
      ]);
    },
  );

  it(
    "keeps example.com as an external host (a warning says it is not read as svc.ns), and the policy's " +
      "hosts.virtualServices bounds it in every host field",
    async () => {
      const files = {
        "clusters/a/values.yaml": MESH_ON,
        "clusters/a/mesh/web.yaml": vs(["example.com"], "example.com", "mirror.evil.net"),
        "clusters/a/mesh/dr.yaml": dr("db.evil.net"),
      };
      const open = await loadAndValidate(makeRepo(files));
      expect(lines(open)).to.include(
        'clusters/a/mesh/web.yaml:8:7: warning: "example.com" is kept as an external host: "com" is none of this cluster\'s namespaces (shop); for the service example of namespace com write example.com.svc.cluster.local',
      );
      expect(lines(open).filter((l) => l.includes("error"))).to.deep.equal([]);
      const bounded = await loadAndValidate(
        makeRepo({ ...files, "policy.yaml": 'hosts:\n  virtualServices: ["*.example.com", "example.com"]\n' }),
      );
      expect(lines(bounded).filter((l) => l.includes("error"))).to.deep.equal([
        'clusters/a/mesh/dr.yaml:7:9: error: DestinationRule shop/web: host "db.evil.net" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.example.com, example.com)',
        'clusters/a/mesh/web.yaml:14:15: error: VirtualService shop/web: mirror host "mirror.evil.net" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.example.com, example.com)',
      ]);
      const narrow = await loadAndValidate(
        makeRepo({
          ...files,
          "clusters/a/mesh/dr.yaml": dr("web"),
          "policy.yaml": 'hosts:\n  virtualServices: ["*.example.com"]\n',
        }),
      );
      expect(lines(narrow).filter((l) => l.includes("error"))).to.deep.equal([
        'clusters/a/mesh/web.yaml:8:7: error: VirtualService shop/web: host "example.com" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.example.com)',
        'clusters/a/mesh/web.yaml:12:19: error: VirtualService shop/web: destination host "example.com" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.example.com)',
        'clusters/a/mesh/web.yaml:14:15: error: VirtualService shop/web: mirror host "mirror.evil.net" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.example.com)',
      ]);
    },
  );
});
