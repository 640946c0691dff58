// vc doctor against the API test server: the snapshot read from a live host, exit codes, text and JSON output.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { tempDir, vc } from "./helpers.js";
import { servingCertificate, tlsSecret } from "../support/certs.js";

const NS = "vc-team-a";

describe("ops: vc doctor (live host)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: string;
  const cert = servingCertificate(["a.example.com"], 90);
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", NS, "mesh-system"] });
    server.put({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "team-a", namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { release: "team-a", app: "vc" } },
        template: {
          metadata: { labels: { release: "team-a", app: "vc" } },
          spec: {
            containers: [
              {
                name: "syncer",
                image: "vc/syncer:1",
                args: ["--backing-store=embedded-kvstore"],
                livenessProbe: { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 },
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data" },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
          },
        ],
      },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "team-a-0",
        namespace: NS,
        labels: { release: "team-a", app: "vc" },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            name: "team-a",
            uid: server.get("apps/v1", "StatefulSet", NS, "team-a")!.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: { containers: [{ name: "syncer", image: "vc/syncer:1" }] },
      status: { phase: "Running" },
    });
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "ingress-1", namespace: "mesh-system", labels: { istio: "ingressgateway" } },
      spec: { containers: [{ name: "proxy", image: "x" }] },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    });
    server.put({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ingressgateway", namespace: "mesh-system" },
      spec: {
        type: "NodePort",
        selector: { istio: "ingressgateway" },
        ports: [{ port: 443, targetPort: 8443, nodePort: 30443 }],
      },
    });
    server.put(tlsSecret("mesh-system", "a-cert", cert));
    server.put({
      apiVersion: "networking.mesh.io/v1beta1",
      kind: "Gateway",
      metadata: { name: "gw-x-default-x-team-a", namespace: NS },
      spec: {
        selector: { istio: "ingressgateway" },
        servers: [
          {
            port: { number: 443, name: "https", protocol: "HTTPS" },
            hosts: ["a.example.com"],
            tls: { mode: "SIMPLE", credentialName: "a-cert" },
          },
        ],
      },
    });
    server.put({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "vc-team-a", namespace: NS } });
    server.put({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "vc-team-a", namespace: NS },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["*"] }],
    });
    server.put({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "vc-team-a", namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "vc-team-a" },
      subjects: [{ kind: "ServiceAccount", name: "vc-team-a", namespace: NS }],
    });
    repo = tempDir();
    mkdirSync(join(repo, "clusters/team-a"), { recursive: true });
    writeFileSync(
      join(repo, "clusters/team-a/values.yaml"),
      "integrations:\n  mesh:\n    enabled: true\ncontrolPlane:\n  backingStore:\n    kvstore:\n      " +
        "persistence:\n        enabled: true\n",
    );
  });
  after(async () => server?.close());

  const doctor = (...extra: string[]) =>
    vc(["doctor", "team-a", "--kubeconfig", server.kubeconfigPath, "--repo", repo, ...extra]);

  it(
    "exit 0 with the injection-label note while the namespace lacks it (also with --strict); no problems once " +
      "labelled",
    async () => {
      for (const extra of [[], ["--strict"]]) {
        const r = await doctor(...extra);
        expect(r.code, r.stdout + r.stderr).to.equal(0);
        expect(r.stdout).to.contain(`virtual cluster team-a (namespace ${NS}): no problems found, 1 note\n\nnotes:\n`);
        expect(r.stdout).to.contain(
          `NOTE [mesh-injection-label] Namespace ${NS}: the host namespace lacks the label mesh-injection=enabled`,
        );
      }
      server.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: NS, labels: { "mesh-injection": "enabled" } },
      });
      const ok = await doctor();
      expect(ok.code, ok.stdout + ok.stderr).to.equal(0);
      // The server's authorizer allows the syncer's pods through its RoleBinding: nothing to say.
      expect(ok.stdout).to.equal(`virtual cluster team-a (namespace ${NS}): no problems found\n`);
    },
  );

  it("reports the repository's mesh resource in customResources with the mesh integration on (spec 7)", async () => {
    const conflicted = tempDir();
    mkdirSync(join(conflicted, "clusters/team-a"), { recursive: true });
    writeFileSync(
      join(conflicted, "clusters/team-a/values.yaml"),
      "integrations:\n  mesh:\n    enabled: true\nsync:\n  toHost:\n    customResources:\n" +
        "      virtualservices.networking.mesh.io:\n        enabled: true\n",
    );
    const r = await vc(["doctor", "team-a", "--kubeconfig", server.kubeconfigPath, "--repo", conflicted]);
    expect(r.code, r.stdout + r.stderr).to.equal(1);
    expect(r.stdout).to.contain(
      "ERROR [mesh-custom-resource] clusters/team-a/values.yaml:7:7: the mesh integration is enabled but the mesh " +
        'custom resource is also set in sync.toHost.customResources: "virtualservices.networking.mesh.io"; remove ' +
        "the entry and use integrations.mesh\n",
    );
    expect(r.stdout).to.not.contain("no problems found");
  });

  it("a warning exits 0, and 1 with --strict; -o json carries the severity and the counts", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "job-x-default-x-team-a", namespace: NS, labels: { "vc.orch.io/managed-by": "team-a" } },
      spec: {
        containers: [
          { name: "job", image: "busybox" },
          { name: "mesh-proxy", image: "proxy" },
        ],
      },
      status: { phase: "Pending" },
    });
    try {
      const r = await doctor();
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.contain(
        `0 errors, 1 warning, 0 notes\n\nwarnings:\nWARNING [pod-pending] Pod ${NS}/job-x-default-x-team-a: ` +
          `Pending, cause not yet visible`,
      );
      const strict = await doctor("--strict", "-o", "json");
      expect(strict.code, strict.stdout + strict.stderr).to.equal(1);
      const out = JSON.parse(strict.stdout) as {
        problems: number;
        counts: Record<string, number>;
        findings: Array<{ check: string; severity: string }>;
      };
      expect(out.counts).to.deep.equal({ error: 0, warning: 1, note: 0 });
      expect(out.problems).to.equal(1);
      expect(out.findings.map((f) => [f.check, f.severity])).to.deep.equal([["pod-pending", "warning"]]);
      const yaml = await doctor("-o", "yaml");
      expect(yaml.stdout).to.contain("severity: warning");
    } finally {
      server.remove("v1", "Pod", NS, "job-x-default-x-team-a");
    }
  });

  it("finds a Pending pod from its scheduling event, a missing sidecar, a broken Gateway; -o json", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-x-default-x-team-a", namespace: NS, labels: { "vc.orch.io/managed-by": "team-a" } },
      spec: { containers: [{ name: "web", image: "nginx" }] },
      status: { phase: "Pending" },
    });
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "web.1", namespace: NS },
      involvedObject: { kind: "Pod", name: "web-x-default-x-team-a", namespace: NS },
      reason: "FailedScheduling",
      message: "0/3 nodes are available: 3 Insufficient memory.",
      lastTimestamp: "2026-11-21T10:00:00Z",
    });
    server.remove("v1", "Secret", "mesh-system", "a-cert");
    const r = await doctor("-o", "json");
    expect(r.code, r.stderr).to.equal(1);
    const out = JSON.parse(r.stdout) as {
      problems: number;
      findings: Array<{ check: string; object: string; message: string }>;
    };
    expect(out.findings.map((f) => `${f.check} ${f.object}`)).to.deep.equal([
      `tls-secret Gateway ${NS}/gw-x-default-x-team-a`,
      `pod-pending Pod ${NS}/web-x-default-x-team-a`,
      `sidecar-missing Pod ${NS}/web-x-default-x-team-a`,
    ]);
    expect(out.findings[1]!.message).to.equal(
      "Pending: insufficient-resources (FailedScheduling: 0/3 nodes are available: 3 Insufficient memory.)",
    );
    expect(out.problems).to.equal(3);
  });

  it(
    "a namespace-scoped user: checks needing cluster-wide reads are reported as not checked, never " + "guessed",
    async () => {
      server.addUser("ns-reader", [
        { verbs: ["get", "list"], apiGroups: ["", "apps", "networking.mesh.io"], resources: ["*"], namespaces: [NS] },
      ]);
      const limited = server.writeKubeconfig({ token: "ns-reader", context: "ns-reader" });
      const metricsRepo = tempDir();
      mkdirSync(join(metricsRepo, "clusters/team-a"), { recursive: true });
      writeFileSync(
        join(metricsRepo, "clusters/team-a/values.yaml"),
        "integrations:\n  metricsServer:\n    enabled: true\n",
      );
      const r = await vc(["doctor", "team-a", "--kubeconfig", limited, "--repo", metricsRepo, "-o", "json"]);
      expect(r.stderr).to.equal("");
      const out = JSON.parse(r.stdout) as { findings: Array<{ check: string }>; notChecked: Record<string, string> };
      expect(out.findings.map((f) => f.check)).not.to.include.members([
        "metrics-api",
        "metrics-forbidden",
        "gateway-selector",
        "tls-secret",
      ]);
      // vc's records live in the records namespace, which a tenant-scoped user may not read: the status is not checked.
      expect(Object.keys(out.notChecked).sort()).to.deep.equal([
        "access",
        "apiService",
        "namespace",
        "sharedProxy",
        "status",
        "virtual",
      ]);
      expect(out.notChecked.apiService).to.equal("not visible to you");
      // The shared metrics proxy lives in vc-system, which such a user may not read either.
      expect(out.notChecked.sharedProxy).to.equal("not visible to you");
      // The caller may not create SubjectAccessReviews: the permission checks say so and guess no 403.
      expect(out.notChecked.access).to.equal(
        "you may not create SubjectAccessReviews, so the permission checks could not be made",
      );
      const admin = await vc([
        "doctor",
        "team-a",
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        metricsRepo,
        "-o",
        "json",
      ]);
      const checks = (JSON.parse(admin.stdout) as { findings: Array<{ check: string }> }).findings.map((f) => f.check);
      expect(checks).to.include.members(["metrics-host-api"]);
    },
  );

  it("exit 1 with a clear message when the namespace does not exist; exit 2 on a bad -o", async () => {
    const r = await vc(["doctor", "ghost", "--kubeconfig", server.kubeconfigPath]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(
      /^error: unknown cluster "ghost": no folder clusters\/ghost in .* and no host namespace vc-ghost on context "test"/,
    );
    // A cluster of the repository (the example's) that is not applied: its namespace is named.
    const notApplied = await vc(["doctor", "minimal", "--kubeconfig", server.kubeconfigPath]);
    expect(notApplied.code).to.equal(1);
    expect(notApplied.stderr).to.contain("host namespace vc-minimal not found");
    const bad = await doctor("-o", "xml");
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('unknown output format "xml"');
  });
});
