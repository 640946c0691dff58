// vc validate reports a public host two clusters of one repository claim, located on the cluster whose name sorts
// later, from the claims index each folder's summary carries (cache and worker threads included).
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runValidate, type Output } from "../../src/cli/validate.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { validateFolders } from "../../src/validate/pool.js";
import { cleanupRepos, makeRepo } from "./fixture.js";

const MESH = "integrations:\n  mesh:\n    enabled: true\n";
const gateway = (hosts: string[]) => `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: edge
  namespace: web
spec:
  selector:
    istio: ingressgateway
  servers:
    - port: {number: 80, name: http, protocol: HTTP}
      hosts:
${hosts.map((h) => `        - "${h}"`).join("\n")}
`;
const routed = (hosts: string[], gateways: string[]) => `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: front
  namespace: web
spec:
  hosts:
${hosts.map((h) => `    - "${h}"`).join("\n")}
  gateways: [${gateways.join(", ")}]
  http:
    - route:
        - destination:
            host: front
`;

function capture(): Output & { out: string; err: string } {
  const c = { out: "", err: "", stdout: (t: string) => void (c.out += t), stderr: (t: string) => void (c.err += t) };
  return c;
}

const FLEET = {
  "clusters/zeta/values.yaml": MESH,
  "clusters/zeta/mesh/edge.yaml": gateway(["other.example.com", "shop.example.com"]),
  "clusters/alpha/values.yaml": MESH,
  "clusters/alpha/mesh/edge.yaml": gateway(["shop.example.com"]),
  // Overlapping by wildcard through a gateway-bound VirtualService.
  "clusters/mid/values.yaml": MESH,
  "clusters/mid/mesh/front.yaml": routed(["front", "*.example.com"], ["edge"]),
  // A host served only inside the mesh claims nothing; another host of its own is no conflict.
  "clusters/quiet/values.yaml": MESH,
  "clusters/quiet/mesh/front.yaml": routed(["shop.example.com"], ["mesh"]),
  "clusters/own/values.yaml": MESH,
  "clusters/own/mesh/edge.yaml": gateway(["own.example.org", "own.example.org"]),
};

describe("validate/host-claims: one public host, one cluster of the repository", () => {
  after(cleanupRepos);

  it(
    "vc validate reports the later-named claimants at their host (file:line:col), not the first, nor mesh-only or " +
      "own hosts",
    async () => {
      const root = makeRepo(FLEET);
      const c = capture();
      expect(await runValidate(root, { format: "text", cluster: [] }, c)).to.equal(1);
      const errors = c.out.split("\n").filter((l) => l.includes("error:"));
      expect(errors).to.have.length(3);
      expect(errors[0]).to.match(
        /^clusters\/mid\/mesh\/front\.yaml:9:7: error: public host "\*\.example\.com" is also claimed by cluster alpha \("shop\.example\.com" at clusters\/alpha\/mesh\/edge\.yaml:12:11\)/,
      );
      // zeta's other.example.com lies within mid's *.example.com; its shop.example.com is alpha's.
      expect(errors[1]).to.match(
        /^clusters\/zeta\/mesh\/edge\.yaml:12:11: error: public host "other\.example\.com" is also claimed by cluster mid \("\*\.example\.com" at clusters\/mid\/mesh\/front\.yaml:9:7\)/,
      );
      expect(errors[2]).to.match(
        /^clusters\/zeta\/mesh\/edge\.yaml:13:11: error: public host "shop\.example\.com" is also claimed by cluster alpha/,
      );
      expect(c.out)
        .to.not.include("clusters/alpha/mesh/edge.yaml:12:11: error")
        .and.not.include("clusters/quiet")
        .and.not.include("clusters/own");
    },
  );

  it(
    "the claims travel in summaries from the cache and from worker threads; commands with the host leave the " +
      "rule off",
    async () => {
      const root = makeRepo(FLEET);
      const cache = mkdtempSync(join(tmpdir(), "vc-claims-cache-"));
      try {
        const cold = await loadAndValidate(root, { detail: "summary", hostClaims: true, cacheDir: join(cache, "c") });
        const warm = await loadAndValidate(root, { detail: "summary", hostClaims: true, cacheDir: join(cache, "c") });
        const codes = (v: typeof cold) =>
          v.diagnostics.filter((d) => d.code === "public-host-claimed").map((d) => `${d.file}:${d.line}:${d.col}`);
        expect(codes(cold)).to.deep.equal([
          "clusters/mid/mesh/front.yaml:9:7",
          "clusters/zeta/mesh/edge.yaml:12:11",
          "clusters/zeta/mesh/edge.yaml:13:11",
        ]);
        expect(codes(warm)).to.deep.equal(codes(cold));
        const names = ["alpha", "mid", "own", "quiet", "zeta"];
        const inWorkers = await validateFolders(root, names, { jobs: 2, detail: "summary", workers: "always" });
        expect(inWorkers.byWorkers).to.equal(names.length);
        expect(inWorkers.results.map((r) => [r.name, (r.claims ?? []).map((k) => k.host)])).to.deep.equal([
          ["alpha", ["shop.example.com"]],
          ["mid", ["*.example.com"]],
          ["own", ["own.example.org", "own.example.org"]],
          ["quiet", []],
          ["zeta", ["other.example.com", "shop.example.com"]],
        ]);
        expect(inWorkers.results.every((r) => r.spec === undefined)).to.equal(true);
        const full = await loadAndValidate(root);
        expect(full.diagnostics.filter((d) => d.code === "public-host-claimed")).to.deep.equal([]);
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    },
  );
});
