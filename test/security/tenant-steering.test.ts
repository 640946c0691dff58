// Issue #38 on the in-memory API server: what a tenant writes (its folder, or what its syncer's Role lets it write in
// its host namespace) never stops, steers or reads the fleet. The real-server twin: test/e2e/tenant-steering.test.ts.
import { expect } from "chai";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import type { Rule } from "../support/kube-server/auth.js";
import { KubeClient } from "../../src/host/client.js";
import type { KubeObject } from "../../src/kube/object.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

describe("tenant steering (in-memory API server)", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let repo: string;
  let kube: string[];
  const vc = (command: string, ...args: string[]) => runVc([command, ...args, ...kube, "--owner", "team-a"]);
  /** minimal's syncer: exactly the rules of the Role vc rendered for it, in its host namespace only. */
  const syncer = (): KubeClient => {
    const role = server.get("rbac.authorization.k8s.io/v1", "Role", "vc-minimal", "vc-minimal")!;
    const rules = (role.rules as Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>).map(
      (r): Rule => ({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [""],
        resources: r.resources ?? [],
        namespaces: ["vc-minimal"],
      }),
    );
    server.addUser("syncer-token", rules, "system:serviceaccount:vc-minimal:vc-minimal");
    return KubeClient.open({
      kubeconfig: server.writeKubeconfig({ token: "syncer-token", context: "syncer" }),
      context: "syncer",
      retry: { attempts: 1 },
    });
  };

  beforeEach(async () => {
    server = await startKubeServer();
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    repo = exampleRepo(["minimal"]);
    const first = await vc("apply", repo);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it(
    "#38.6: pods the syncer makes with the control plane's labels and name, crash-looping, are not the " +
      "cluster's health",
    async () => {
      const tenant = syncer();
      try {
        const crashing = (name: string): KubeObject => ({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, namespace: "vc-minimal", labels: { release: "minimal", app: "vc" } },
          spec: { containers: [{ name: "syncer", image: "x" }] },
        });
        for (const name of ["minimal-0", "planted"]) {
          await tenant.request("POST", "/api/v1/namespaces/vc-minimal/pods", { body: crashing(name) });
          const live = await tenant.get({ apiVersion: "v1", kind: "Pod", namespace: "vc-minimal", name });
          await tenant.request("PUT", `/api/v1/namespaces/vc-minimal/pods/${name}/status`, {
            body: {
              ...live,
              status: {
                phase: "Running",
                containerStatuses: [
                  { name: "syncer", restartCount: 9, state: { waiting: { reason: "CrashLoopBackOff" } } },
                ],
              },
            },
          });
        }
      } finally {
        tenant.close();
      }
      const listed = await runVc(["list", "--repo", repo, "-o", "json", "--kubeconfig", server.kubeconfigPath]);
      const row = (JSON.parse(listed.stdout) as Array<{ name: string; health: string; healthReason?: string }>)[0]!;
      expect(row.health, JSON.stringify(row)).to.not.equal("Degraded");
      expect(row.healthReason ?? "").to.not.include("CrashLoopBackOff");
      const doctor = await runVc([
        "doctor",
        "minimal",
        "--repo",
        repo,
        "-o",
        "json",
        "--kubeconfig",
        server.kubeconfigPath,
      ]);
      const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ check: string; message: string }> }).findings;
      // Reported as pods of the namespace, never as the control plane's: its pod does not run.
      const controlPlane = findings.filter((f) => f.check === "control-plane-pod");
      expect(controlPlane).to.have.length(1);
      expect(controlPlane[0]!.message).to.include("does not exist").and.not.include("CrashLoopBackOff");
    },
  );

  it(
    "#38 doctor: vc doctor reads a namespace the syncer filled with pods up to its bound, and finds the control " +
      "plane's",
    async () => {
      const sts = server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal")!;
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "minimal-0",
          namespace: "vc-minimal",
          labels: { release: "minimal", app: "vc" },
          ownerReferences: [
            { apiVersion: "apps/v1", kind: "StatefulSet", name: "minimal", uid: sts.metadata.uid!, controller: true },
          ],
        },
        spec: { containers: [{ name: "syncer", image: "x" }] },
        status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
      });
      const tenant = syncer();
      try {
        // 140 pods of 250 KB of annotations each (35 MB): past doctor's 32 MiB, and named to be listed first.
        const pad = "x".repeat(250 * 1024);
        for (let i = 0; i < 140; i++) {
          const name = `a-${String(i).padStart(3, "0")}`;
          await tenant.request("POST", "/api/v1/namespaces/vc-minimal/pods", {
            body: {
              apiVersion: "v1",
              kind: "Pod",
              metadata: { name, namespace: "vc-minimal", annotations: { pad } },
              spec: { containers: [{ name: "c", image: "x" }] },
            },
          });
        }
      } finally {
        tenant.close();
      }
      const doctor = await runVc([
        "doctor",
        "minimal",
        "--repo",
        repo,
        "-o",
        "json",
        "--kubeconfig",
        server.kubeconfigPath,
      ]);
      const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ check: string; message: string }> }).findings;
      const bounded = findings.filter((f) => f.check === "host-reads-bounded");
      expect(bounded.map((f) => f.message).join("\n"))
        .to.include("/pods")
        .and.include("bytes");
      // The control plane's pod is read by name: no finding says it is missing.
      expect(findings.filter((f) => f.check === "control-plane-pod")).to.deep.equal([]);
    },
  );

  it(
    "#38.12: vc adopt --take-ownership of an object the cluster does not render is an error and writes " + "nothing",
    async () => {
      mkdirSync(join(repo, "clusters", "fresh"), { recursive: true });
      writeFileSync(join(repo, "clusters", "fresh", "values.yaml"), "{}\n");
      server.resetRequests();
      const res = await vc("adopt", "fresh", repo, "--take-ownership", "ConfigMap/vc-fresh/not-rendered");
      expect(res.code, res.stdout + res.stderr).to.equal(2);
      expect(res.stderr).to.include("ConfigMap/vc-fresh/not-rendered").and.include("does not render");
      expect(server.requests.filter((r) => WRITES.has(r.method))).to.deep.equal([]);
    },
  );
});

describe("tenant steering without a host (dir: target)", function () {
  this.timeout(60_000);

  /** Every Gateway manifest under a dir: target, as `cluster/file`. */
  const gateways = (dir: string): string[] =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true, encoding: "utf8" })
          .filter((f) => /gateway\.networking\.mesh\.io_/.test(f))
          .sort()
      : [];

  it("#38.9: vc apply --target dir: refuses two clusters claiming one public host as --target kube does", async () => {
    const repo = exampleRepo(["bookinfo"]);
    const out = mkdtempSync(join(tmpdir(), "vc-dir-claims-"));
    try {
      cpSync(join(repo, "clusters", "bookinfo"), join(repo, "clusters", "bookinfo-copy"), { recursive: true });
      writeFileSync(join(repo, "clusters", "bookinfo-copy", "cluster.yaml"), "namespace: team-bookinfo-copy\n");
      const validated = await runVc(["validate", repo]);
      expect(validated.code, validated.stdout).to.equal(1);
      expect(validated.stdout + validated.stderr).to.include("bookinfo.example.com");

      const res = await runVc(["apply", repo, "--target", `dir:${out}`]);
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stdout).to.include('public host "bookinfo.example.com" belongs to cluster');
      expect(gateways(out), "no Gateway written for either").to.deep.equal([]);

      // Once one folder gives the host up, the other is applied; a later claim of it loses to the written one.
      rmSync(join(repo, "clusters", "bookinfo-copy"), { recursive: true });
      expect((await runVc(["apply", repo, "--target", `dir:${out}`])).code).to.equal(0);
      expect(gateways(out)).to.have.length(1);
      mkdirSync(join(repo, "clusters", "late", "mesh"), { recursive: true });
      cpSync(join(repo, "clusters", "bookinfo", "values.yaml"), join(repo, "clusters", "late", "values.yaml"));
      cpSync(
        join(repo, "clusters", "bookinfo", "mesh", "gateway.yaml"),
        join(repo, "clusters", "late", "mesh", "gateway.yaml"),
      );
      const late = await runVc(["apply", repo, "--target", `dir:${out}`, "--cluster", "late"]);
      expect(late.code, late.stdout + late.stderr).to.equal(1);
      expect(late.stdout).to.include('public host "bookinfo.example.com" belongs to cluster bookinfo');
      expect(gateways(out)).to.have.length(1);
    } finally {
      rmSync(repo, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });
});
