import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runValidate, type Output } from "../../src/cli/validate.js";
import { formatDiagnostic } from "../../src/model/diagnostic.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { validateFolders } from "../../src/validate/pool.js";
import { loadPolicy } from "../../src/validate/policy.js";
import { hostAllowed } from "../../src/claims/hosts.js";
import { nameAllowed } from "../../src/validate/policy-rules.js";
import { cleanupRepos, makeRepo, MESH_ON, VS } from "./fixture.js";

const EXAMPLES = new URL("../../", import.meta.url).pathname;

const POLICY = `hosts:
  virtualServices: ["*.apps.example.com"]
  gateways: ["*.apps.example.com", "exact.example.com"]
gateways:
  selectors:
    - istio: ingressgateway
  credentialNames: ["team-*-cert"]
quota:
  max:
    requests.cpu: "4"
    limits.memory: 8Gi
database:
  hosts: ["*.db.internal"]
`;

const GATEWAY = (selector: string, hosts: string[], cred: string): string => `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: gw
  namespace: web
spec:
  selector:
${selector}
  servers:
    - port: {number: 443, name: https, protocol: HTTPS}
      hosts:
${hosts.map((h) => `        - ${h}`).join("\n")}
      tls:
        mode: SIMPLE
        credentialName: ${cred}
`;

const lines = (r: { diagnostics: Parameters<typeof formatDiagnostic>[0][] }): string[] =>
  r.diagnostics.map(formatDiagnostic);

describe("validate: fleet policy (policy.yaml)", () => {
  after(cleanupRepos);

  it(
    "matches host patterns as the mesh does: exact names, *.suffix wildcards (deeper names and narrower wildcards " +
      "too), *",
    () => {
      expect(hostAllowed("a.apps.example.com", "*.apps.example.com")).to.equal(true);
      expect(hostAllowed("a.b.apps.example.com", "*.apps.example.com")).to.equal(true);
      expect(hostAllowed("*.x.apps.example.com", "*.apps.example.com")).to.equal(true);
      expect(hostAllowed("apps.example.com", "*.apps.example.com")).to.equal(false);
      expect(hostAllowed("*.example.com", "*.apps.example.com")).to.equal(false);
      expect(hostAllowed("evilapps.example.com", "*.apps.example.com")).to.equal(false);
      expect(hostAllowed("*", "*.apps.example.com")).to.equal(false);
      expect(hostAllowed("Shop.Example.com", "shop.example.com")).to.equal(true);
      expect(hostAllowed("anything", "*")).to.equal(true);
      expect(nameAllowed("team-a-cert", "team-*-cert")).to.equal(true);
      expect(nameAllowed("other-cert", "team-*-cert")).to.equal(false);
      expect(nameAllowed("team.x-cert", "team.*-cert")).to.equal(true);
      expect(nameAllowed("teamAx-cert", "team.*-cert")).to.equal(false);
    },
  );

  it("the example repository passes its own policy.yaml", async () => {
    const loaded = loadPolicy(EXAMPLES);
    expect(loaded.broken).to.equal(false);
    expect(loaded.policy?.hosts?.gateways).to.deep.equal(["*.example.com"]);
    const r = await loadAndValidate(EXAMPLES);
    expect(r.diagnostics).to.deep.equal([]);
    expect(r.clusters.every((c) => c.valid)).to.equal(true);
  });

  it(
    "refuses a cluster that claims hosts, selectors, credentials, quota or a database outside the policy, each at " +
      "file:line:col; other clusters go on",
    async () => {
      const root = makeRepo({
        "policy.yaml": POLICY,
        "clusters/ok/values.yaml":
          `${MESH_ON}policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      ` + `requests.cpu: 4000m\n`,
        "clusters/ok/mesh/vs.yaml": `${VS("reviews")}`.replace(
          "    - reviews\n",
          "    - reviews\n    - shop.apps.example.com\n",
        ),
        "clusters/ok/mesh/gw.yaml": GATEWAY(
          "    istio: ingressgateway\n    extra: narrower",
          ["web/a.apps.example.com", "exact.example.com"],
          "team-ok-cert",
        ),
        "clusters/bad/values.yaml":
          `${MESH_ON}policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      ` +
          `requests.cpu: "5"\n      limits.memory: 8Gi\ncontrolPlane:\n  backingStore:\n    kvstore:\n      ` +
          `embedded:\n        enabled: false\n    database:\n      external:\n        enabled: true\n        ` +
          `endpoint: postgres://pg.elsewhere.com:5432/vc\n`,
        "clusters/bad/mesh/vs.yaml": `${VS("reviews")}`.replace(
          "    - reviews\n",
          "    - reviews\n    - bank.example.com\n",
        ),
        "clusters/bad/mesh/gw.yaml": GATEWAY(
          "    app: other-ingress",
          ['"*/bank.example.com"', "ok.apps.example.com"],
          "stolen-cert",
        ),
      });
      const r = await loadAndValidate(root);
      expect(r.clusters.find((c) => c.name === "ok")!.valid).to.equal(true);
      const bad = r.clusters.find((c) => c.name === "bad")!;
      expect(bad.valid).to.equal(false);
      expect(bad.spec).to.equal(undefined);
      expect(lines(r)).to.deep.equal([
        'clusters/bad/mesh/gw.yaml:8:5: error: Gateway web/gw: selector {"app":"other-ingress"} does not select an ingress gateway the fleet policy allows (policy.yaml gateways.selectors: {istio=ingressgateway})',
        'clusters/bad/mesh/gw.yaml:12:11: error: Gateway web/gw: host "bank.example.com" is not allowed by the fleet policy (policy.yaml hosts.gateways: *.apps.example.com, exact.example.com)',
        'clusters/bad/mesh/gw.yaml:16:25: error: Gateway web/gw: tls.credentialName "stolen-cert" is not allowed by the fleet policy (policy.yaml gateways.credentialNames: team-*-cert)',
        'clusters/bad/mesh/vs.yaml:8:7: error: VirtualService default/reviews: host "bank.example.com" is not allowed by the fleet policy (policy.yaml hosts.virtualServices: *.apps.example.com)',
        "clusters/bad/values.yaml:8:21: error: quota requests.cpu: 5 is more than the fleet policy allows " +
          "(policy.yaml quota.max: 4)",
        'clusters/bad/values.yaml:18:19: error: database host "pg.elsewhere.com" is not allowed by the fleet policy (policy.yaml database.hosts: *.db.internal)',
      ]);
    },
  );

  it("quota.required demands a quota of every cluster; without it a cluster without a quota passes", async () => {
    const files = {
      "clusters/none/values.yaml": "{}\n",
      "clusters/partial/values.yaml":
        'policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      requests.cpu: "1"\n',
    };
    const loose = await loadAndValidate(makeRepo({ ...files, "policy.yaml": POLICY }));
    expect(loose.diagnostics).to.deep.equal([]);
    const strict = await loadAndValidate(
      makeRepo({ ...files, "policy.yaml": `${POLICY.replace("quota:\n", "quota:\n  required: true\n")}` }),
    );
    expect(lines(strict)).to.deep.equal([
      "clusters/none/values.yaml: error: the fleet policy (policy.yaml quota.required) requires a resource quota: " +
        "set policies.resourceQuota.enabled: true with limits.memory, requests.cpu at most 8Gi, 4",
      'clusters/partial/values.yaml:4:5: error: the fleet policy (policy.yaml quota.required) requires policies.resourceQuota.quota["limits.memory"] (at most 8Gi)',
    ]);
  });

  it(
    "compares quotas exactly as Kubernetes reads them: 1Ei and 9E are over 8Gi, 8192Mi and 8589934592 " + "are not",
    async () => {
      const quota = (memory: string) =>
        `policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      limits.memory: ${memory}\n`;
      const r = await loadAndValidate(
        makeRepo({
          "policy.yaml": POLICY,
          "clusters/ei/values.yaml": quota("1Ei"),
          "clusters/exa/values.yaml": quota("9E"),
          "clusters/exp/values.yaml": quota('"1e12"'),
          "clusters/mi/values.yaml": quota("8192Mi"),
          "clusters/plain/values.yaml": quota('"8589934592"'),
          "clusters/one-more/values.yaml": quota('"8589934593"'),
        }),
      );
      expect(lines(r)).to.deep.equal([
        "clusters/ei/values.yaml:5:22: error: quota limits.memory: 1Ei is more than the fleet policy allows " +
          "(policy.yaml quota.max: 8Gi)",
        "clusters/exa/values.yaml:5:22: error: quota limits.memory: 9E is more than the fleet policy allows " +
          "(policy.yaml quota.max: 8Gi)",
        "clusters/exp/values.yaml:5:22: error: quota limits.memory: 1e12 is more than the fleet policy allows " +
          "(policy.yaml quota.max: 8Gi)",
        "clusters/one-more/values.yaml:5:22: error: quota limits.memory: 8589934593 is more than the fleet policy " +
          "allows (policy.yaml quota.max: 8Gi)",
      ]);
    },
  );

  it(
    "an invalid policy.yaml is a located error and no cluster is applied (its bounds could not be " + "enforced)",
    async () => {
      const root = makeRepo({
        "policy.yaml": 'hosts:\n  virtualService: ["*.x.com"]\nquota:\n  max:\n    requests.cpu: lots\n    cpu: "1"\n',
        "clusters/a/values.yaml": "{}\n",
      });
      const r = await loadAndValidate(root);
      expect(lines(r)).to.deep.equal([
        "clusters/a: error: not applied: the fleet policy policy.yaml is invalid and cannot be enforced; fix its " +
          "errors first",
        'policy.yaml:2:3: error: unknown key "virtualService" in hosts: did you mean "virtualServices"?',
        'policy.yaml:5:5: error: invalid quantity "lots" at quota.max["requests.cpu"]: use forms like 200m, 1, 512Mi, 2Gi',
        'policy.yaml:6:5: error: invalid key "cpu" in quota.max: use one of requests.cpu, requests.memory, limits.cpu, limits.memory',
      ]);
      expect(r.clusters[0]!.valid).to.equal(false);
      const syntax = await loadAndValidate(makeRepo({ "policy.yaml": "hosts: [\n", "clusters/a/values.yaml": "{}\n" }));
      expect(syntax.diagnostics.find((d) => d.file === "policy.yaml")!.line).to.be.greaterThan(0);
      expect(syntax.clusters[0]!.valid).to.equal(false);
    },
  );

  it("is enforced on cached results and in worker threads, and the cache keeps no policy finding", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "vc-policy-cache-"));
    try {
      const files = {
        "clusters/a/values.yaml":
          'policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      requests.cpu: "9"\n',
      };
      const plain = makeRepo(files);
      expect((await loadAndValidate(plain, { cacheDir })).clusters[0]!.valid).to.equal(true);
      const root = makeRepo({ ...files, "policy.yaml": POLICY });
      for (const detail of ["summary", "full"] as const) {
        const r = await loadAndValidate(root, { cacheDir, detail });
        expect(lines(r), detail).to.deep.equal([
          "clusters/a/values.yaml:5:21: error: quota requests.cpu: 9 is more than the fleet policy allows " +
            "(policy.yaml quota.max: 4)",
        ]);
      }
      expect((await loadAndValidate(plain, { cacheDir })).clusters[0]!.valid).to.equal(true);
      // The same cluster many times over, so that the worker takes some: each copy is held to the policy there too.
      for (let i = 0; i < 40; i++)
        cpSync(join(root, "clusters", "a"), join(root, "clusters", `a${i}`), { recursive: true });
      const names = Array.from({ length: 40 }, (_, i) => `a${i}`);
      const inWorkers = await validateFolders(root, names, {
        jobs: 2,
        detail: "summary",
        policy: loadPolicy(root),
        workers: "always",
      });
      expect(inWorkers.byWorkers, "every folder went to the worker").to.equal(names.length);
      for (const r of inWorkers.results) {
        expect(r.valid).to.equal(false);
        expect(r.diagnostics.map((d) => d.code)).to.deep.equal(["policy"]);
      }
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it("vc validate --format github shows policy errors as annotations with file, line and column", async () => {
    const root = makeRepo({
      "policy.yaml": POLICY,
      "clusters/a/values.yaml": 'policies:\n  resourceQuota:\n    enabled: true\n    quota:\n      requests.cpu: "9"\n',
    });
    const out: Output & { out: string } = {
      out: "",
      stdout: (t) => void (out.out += t),
      stderr: (t) => void (out.out += t),
    };
    const code = await runValidate(root, { format: "github", cluster: [] }, out);
    expect(code).to.equal(1);
    expect(out.out).to.include("::error file=clusters/a/values.yaml,line=5,col=21");
    expect(out.out).to.include("quota requests.cpu: 9 is more than the fleet policy allows");
  });
});
