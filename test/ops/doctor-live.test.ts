// vc doctor against the API test server on a host vc applied and an operator broke: the new checks from live objects,
// the exit codes of errors, warnings (--strict) and notes, slow reads and the control plane's own configuration.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { diagnose } from "../../src/ops/doctor/index.js";
import { gatherSnapshot, readTimer } from "../../src/ops/doctor/gather.js";
import { openHost } from "../../src/ops/host.js";
import { P } from "../../src/ops/paths.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";
import { breakDoctorHost, SHOP_FINDINGS, writeDoctorRepo } from "./doctor-host.js";

type Report = {
  counts: Record<string, number>;
  notChecked: Record<string, string>;
  findings: Array<{ check: string; severity: string; object: string; message: string; resolution: string }>;
};

describe("ops: vc doctor on a broken host (API test server)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: string;
  before(async () => {
    server = await startKubeServer({ namespaces: ["default"] });
    repo = writeDoctorRepo();
    await breakDoctorHost(server.kubeconfigPath, repo);
  });
  after(async () => {
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });
  const doctor = (...args: string[]) =>
    runVc(["doctor", ...args, "--kubeconfig", server.kubeconfigPath, "--repo", repo]);

  it(
    "finds the missing control-plane pod, TLS Secret and route target, the pod without requests and the live mesh " +
      "conflict; exit 1",
    async () => {
      const res = await doctor("shop", "-o", "json");
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      const report = JSON.parse(res.stdout) as Report;
      // The server's authorizer (SubjectAccessReview, from its RBAC) denies the metrics reader: the same findings as on
      // the real server.
      expect(report.findings.map((f) => `${f.check} ${f.severity} ${f.object}`).sort()).to.deep.equal(
        [...SHOP_FINDINGS].sort(),
      );
      expect(report.notChecked.access).to.equal(undefined);
    },
  );

  it(
    "asks the server's authorizer: a denied metrics reader and syncer are found; a binding to " +
      "system:authenticated and one naming the ServiceAccount without namespace are quiet",
    async () => {
      const checks = async () =>
        (JSON.parse((await doctor("shop", "-o", "json")).stdout) as Report).findings.filter(
          (f) => f.check === "metrics-forbidden" || f.check === "syncer-rbac",
        );
      expect((await checks()).map((f) => f.message)).to.deep.equal([
        "HTTP 403 Forbidden: system:serviceaccount:vc-system:vc-metrics-proxy may not get, list pods.metrics.k8s.io " +
          "in vc-shop",
      ]);
      const rbac = "rbac.authorization.k8s.io/v1";
      const syncerBindings = server
        .list(rbac, "RoleBinding", "vc-shop")
        .filter((b) => (b as { subjects?: Array<{ name?: string }> }).subjects?.[0]?.name === "vc-shop");
      expect(syncerBindings).to.not.be.empty;
      try {
        server.put({
          apiVersion: rbac,
          kind: "ClusterRole",
          metadata: { name: "any-metrics" },
          rules: [{ apiGroups: ["metrics.k8s.io"], resources: ["pods", "nodes"], verbs: ["get", "list"] }],
        } as never);
        server.put({
          apiVersion: rbac,
          kind: "ClusterRoleBinding",
          metadata: { name: "any-metrics" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "any-metrics" },
          subjects: [{ kind: "Group", name: "system:authenticated" }],
        } as never);
        expect(await checks()).to.deep.equal([]);
        for (const b of syncerBindings) server.remove(rbac, "RoleBinding", "vc-shop", b.metadata.name);
        expect((await checks()).map((f) => f.message)).to.deep.equal([
          "system:serviceaccount:vc-shop:vc-shop may not create, delete, get, list pods in vc-shop: pod sync cannot work",
        ]);
        server.put({
          apiVersion: rbac,
          kind: "Role",
          metadata: { name: "pods-by-hand", namespace: "vc-shop" },
          rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "delete", "get", "list"] }],
        } as never);
        server.put({
          apiVersion: rbac,
          kind: "RoleBinding",
          metadata: { name: "pods-by-hand", namespace: "vc-shop" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pods-by-hand" },
          subjects: [{ kind: "ServiceAccount", name: "vc-shop" }],
        } as never);
        expect(await checks()).to.deep.equal([]);
      } finally {
        for (const [kind, ns, name] of [
          ["ClusterRoleBinding", undefined, "any-metrics"],
          ["ClusterRole", undefined, "any-metrics"],
          ["RoleBinding", "vc-shop", "pods-by-hand"],
          ["Role", "vc-shop", "pods-by-hand"],
        ] as const)
          server.remove(rbac, kind, ns, name);
        for (const b of syncerBindings) server.put(b);
      }
      // A host that serves no SubjectAccessReview (404): the permission checks say so and guess nothing.
      const fault = server.faults.add({
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        status: 404,
      });
      try {
        const report = JSON.parse((await doctor("shop", "-o", "json")).stdout) as Report;
        expect(report.notChecked.access).to.equal(
          "the host serves no SubjectAccessReview, so the permission checks could not be made",
        );
        expect(report.findings.map((f) => f.check)).to.not.include("metrics-forbidden");
      } finally {
        fault.remove();
      }
    },
  );

  it(
    "a cluster with a Pending control-plane pod and notes: exit 0, exit 1 with --strict; notes alone " + "never fail",
    async () => {
      const res = await doctor("calm");
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      expect(res.stdout).to.match(/^virtual cluster calm \(namespace vc-calm\): 0 errors, 1 warning, 1 note\n/);
      expect(res.stdout).to.contain("WARNING [pod-pending] Pod vc-calm/calm-0: Pending, cause not yet visible");
      expect(res.stdout).to.contain(
        "NOTE [persistence] StatefulSet vc-calm/calm: the embedded kvstore has no persistent volume (the default)",
      );
      expect((await doctor("calm", "--strict")).code).to.equal(1);
      const host = openHost({ kubeconfig: server.kubeconfigPath });
      try {
        await host.mergePatch(`${P.pods("vc-calm", "calm-0")}/status`, {
          status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
        });
      } finally {
        host.close();
      }
      const notes = await doctor("calm", "--strict");
      expect(notes.code, notes.stdout + notes.stderr).to.equal(0);
      expect(notes.stdout.split("\n")[0]).to.equal(
        "virtual cluster calm (namespace vc-calm): no problems found, 1 note",
      );
    },
  );

  it("records reads of the host that took long, and reports them as host-api-slow", async () => {
    // A read delayed past the threshold is slow however loaded the machine is; other reads may be slow too under load.
    const fault = server.faults.add({ path: P.events("vc-calm"), latencyMs: 300 });
    const host = openHost({ kubeconfig: server.kubeconfigPath });
    try {
      const s = await gatherSnapshot(host, "calm", "vc-calm", undefined, { slowReadMs: 250 });
      expect(s.slowReads.map((r) => r.path)).to.include(P.events("vc-calm"));
      const [f] = diagnose({ ...s, slowReads: s.slowReads.filter((r) => r.path === P.events("vc-calm")) }).filter(
        (x) => x.check === "host-api-slow",
      );
      expect(f!.message).to.match(
        /^the host API answered slowly while vc doctor read it: 1 slow read\(s\), the slowest GET \/api\/v1\/namespaces\/vc-calm\/events took \d+\.\d s$/,
      );
    } finally {
      fault.remove();
      host.close();
    }
  });

  it(
    "times reads with the clock it is given: at or past the threshold is slow, below it is not, " + "failures count",
    async () => {
      let clock = 0;
      const slowReads: Array<{ path: string; ms: number }> = [];
      const timed = readTimer(slowReads, 250, () => clock);
      const later = (ms: number, fail = false) =>
        new Promise<string>((resolve, reject) =>
          setImmediate(() => {
            clock += ms;
            if (fail) reject(new Error("refused"));
            else resolve("ok");
          }),
        );
      expect(await timed("/fast", later(249))).to.equal("ok");
      expect(await timed("/edge", later(250))).to.equal("ok");
      await timed("/failed", later(400, true)).catch(() => undefined);
      expect(slowReads).to.deep.equal([
        { path: "/edge", ms: 250 },
        { path: "/failed", ms: 400 },
      ]);
    },
  );

  it("looks up a route's Service in another namespace by name", async () => {
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shared" } });
    server.put({
      apiVersion: "networking.mesh.io/v1beta1",
      kind: "VirtualService",
      metadata: { name: "to-shared", namespace: "vc-shop" },
      spec: {
        hosts: ["api.example.com"],
        http: [{ route: [{ destination: { host: "auth.shared.svc.cluster.local" } }] }],
      },
    });
    const host = openHost({ kubeconfig: server.kubeconfigPath });
    try {
      const missing = diagnose(await gatherSnapshot(host, "shop", "vc-shop")).filter(
        (f) => f.object === "VirtualService vc-shop/to-shared",
      );
      expect(missing.map((f) => f.message)).to.deep.equal([
        "route destination auth.shared.svc.cluster.local names Service shared/auth, which does not exist on the host",
      ]);
      server.put({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "auth", namespace: "shared" },
        spec: { ports: [{ port: 80 }] },
      });
      expect(
        diagnose(await gatherSnapshot(host, "shop", "vc-shop")).filter(
          (f) => f.object === "VirtualService vc-shop/to-shared",
        ),
      ).to.deep.equal([]);
    } finally {
      host.close();
      server.remove("networking.mesh.io/v1beta1", "VirtualService", "vc-shop", "to-shared");
    }
  });

  it(
    "reads the control plane's own configuration without the repository; an unreadable one is listed as not " +
      "checked",
    async () => {
      const res = await runVc([
        "doctor",
        "shop",
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        "/nonexistent",
        "-o",
        "json",
      ]);
      const report = JSON.parse(res.stdout) as Report;
      expect(report.findings.map((f) => f.check)).to.include.members([
        "mesh-custom-resource",
        "metrics-proxy-tls",
        "node-metrics",
      ]);
      const host = openHost({ kubeconfig: server.kubeconfigPath });
      try {
        await host.mergePatch(P.secrets("vc-shop", "vc-config-shop"), {
          data: { "values.yaml": Buffer.from("controlPlane: 7\n").toString("base64") },
        });
        const s = await gatherSnapshot(host, "shop", "vc-shop");
        expect(s.liveValues).to.equal(undefined);
        expect(s.unreadable?.config).to.equal("the control plane's config Secret vc-config-shop holds no valid values");
      } finally {
        host.close();
      }
    },
  );
});
