// Issue #38 on a real API server, acting as the tenant: minimal's syncer with a TokenRequest token of its real
// ServiceAccount (the Role vc rendered). What it writes in its host namespace neither decides the cluster's health nor
// runs the reconciler out of memory. The in-memory twin: test/security/tenant-steering.test.ts.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadAll } from "js-yaml";
import type { KubeObject } from "../../src/kube/object.js";
import { KubeClient } from "../../src/host/client.js";
import { mapLimit } from "../../src/util/pool.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const ROOT = join(import.meta.dirname, "..", "..");

interface Container {
  env: Array<{ name: string; value?: string }>;
  args: string[];
  resources: { limits: { memory: string } };
}

/** The reconciler's container as deploy/reconciler/deployment.yaml runs it. */
function deployed(): Container {
  const docs = loadAll(readFileSync(join(ROOT, "deploy/reconciler/deployment.yaml"), "utf8")) as Array<{
    kind: string;
    spec: { template: { spec: { containers: Container[] } } };
  }>;
  return docs.find((d) => d.kind === "Deployment")!.spec.template.spec.containers[0]!;
}

/** Runs vc as the Deployment runs the reconciler (its NODE_OPTIONS and environment): exit, output, peak RSS in MiB. */
async function underDeployment(args: string[]): Promise<{ code: number | null; out: string; peakMiB: number }> {
  const c = deployed();
  const nodeOptions = c.env.find((e) => e.name === "NODE_OPTIONS")!.value!;
  const env = Object.fromEntries(
    c.env.filter((e) => e.value !== undefined && e.name !== "NODE_OPTIONS").map((e) => [e.name, e.value!]),
  );
  const work = mkdtempSync(join(tmpdir(), "vc-steer-"));
  try {
    const usage = join(work, "usage.json");
    const child = spawn(
      process.execPath,
      [
        ...nodeOptions.split(/\s+/),
        "--import",
        resolve(ROOT, "bench/usage-hook.mjs"),
        resolve(ROOT, "bin/vc.js"),
        ...args,
        ...(args[0] === "reconcile" ? ["--cache-dir", join(work, "cache")] : []),
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env, NO_COLOR: "1", VC_BENCH_USAGE_FILE: usage } },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      child.once("exit", (c2, s) => r([c2, s])),
    );
    expect(out).to.not.match(/heap out of memory|Allocation failed/);
    expect(signal, out.slice(-2000)).to.equal(null);
    const peakMiB = (JSON.parse(readFileSync(usage, "utf8")) as { maxRssKiB: number }).maxRssKiB / 1024;
    return { code, out, peakMiB };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The Deployment's memory limit, in MiB. */
const memoryLimitMiB = () => Number(/^(\d+)Mi$/.exec(deployed().resources.limits.memory)![1]);

describe("e2e: tenant steering on a real API server", function () {
  this.timeout(600_000);
  const kube = useRealKube();
  let repo: string;
  let reconciler: string;
  let syncer: KubeClient;

  before(async () => {
    await installExampleCrds(kube());
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
    reconciler = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    repo = exampleRepo(["minimal"]);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-qm", "fleet");
    const first = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", reconciler]);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    syncer = KubeClient.open({
      kubeconfig: await kube().serviceAccountKubeconfig("vc-minimal", "vc-minimal"),
      retry: { attempts: 1 },
    });
  });
  after(() => {
    syncer?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  const pod = (name: string, annotations: Record<string, string> = {}): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "vc-minimal", labels: { release: "minimal", app: "vc" }, annotations },
    spec: { containers: [{ name: "syncer", image: "registry.invalid/x:1" }] },
  });

  it("#38.6: the syncer's crash-looping pods named and labelled as the control plane are not its health", async () => {
    for (const name of ["minimal-0", "planted"]) {
      await syncer.request("POST", "/api/v1/namespaces/vc-minimal/pods", { body: pod(name) });
      const live = await syncer.get({ apiVersion: "v1", kind: "Pod", namespace: "vc-minimal", name });
      await syncer.request("PUT", `/api/v1/namespaces/vc-minimal/pods/${name}/status`, {
        body: {
          ...live,
          status: {
            phase: "Running",
            containerStatuses: [
              {
                name: "syncer",
                image: "registry.invalid/x:1",
                imageID: "",
                ready: false,
                restartCount: 9,
                state: { waiting: { reason: "CrashLoopBackOff" } },
              },
            ],
          },
        },
      });
    }
    const listed = await runVc(["list", "--repo", repo, "-o", "json", "--kubeconfig", kube().kubeconfigPath]);
    expect(listed.code, listed.stderr).to.equal(0);
    const row = (JSON.parse(listed.stdout) as Array<{ health: string; healthReason?: string }>)[0]!;
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
      kube().kubeconfigPath,
    ]);
    const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ check: string; message: string }> }).findings;
    const controlPlane = findings.filter((f) => f.check === "control-plane-pod");
    expect(controlPlane).to.have.length(1);
    expect(controlPlane[0]!.message).to.not.include("CrashLoopBackOff");
    for (const name of ["minimal-0", "planted"])
      await syncer.request("DELETE", `/api/v1/namespaces/vc-minimal/pods/${name}`, { body: { gracePeriodSeconds: 0 } });
  });

  it(
    "#38.1: 1,000 pods of 100 KB with the control plane's labels: a reconciler pass under the Deployment's flags " +
      "completes within its memory limit",
    async () => {
      const note = "x".repeat(100 * 1024);
      await mapLimit(
        Array.from({ length: 1000 }, (_, i) => i),
        16,
        (i) => syncer.request("POST", "/api/v1/namespaces/vc-minimal/pods", { body: pod(`heavy-${i}`, { note }) }),
      );
      const c = deployed();
      const nodeOptions = c.env.find((e) => e.name === "NODE_OPTIONS")!.value!;
      const env = Object.fromEntries(
        c.env.filter((e) => e.value !== undefined && e.name !== "NODE_OPTIONS").map((e) => [e.name, e.value!]),
      );
      const work = mkdtempSync(join(tmpdir(), "vc-steer-"));
      try {
        // A change, so that the pass reads the cluster's health afterwards.
        execFileSync(
          "sh",
          ["-c", "echo '# touched' >> clusters/minimal/values.yaml && git add -A && git commit -qm t"],
          {
            cwd: repo,
            env: {
              ...process.env,
              GIT_AUTHOR_NAME: "t",
              GIT_AUTHOR_EMAIL: "t@e",
              GIT_COMMITTER_NAME: "t",
              GIT_COMMITTER_EMAIL: "t@e",
            },
          },
        );
        const usage = join(work, "usage.json");
        const child = spawn(
          process.execPath,
          [
            ...nodeOptions.split(/\s+/),
            "--import",
            resolve(ROOT, "bench/usage-hook.mjs"),
            resolve(ROOT, "bin/vc.js"),
            "reconcile",
            "--once",
            "--repo",
            repo,
            "--target",
            "kube",
            "--kubeconfig",
            reconciler,
            "--cache-dir",
            join(work, "cache"),
          ],
          {
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, ...env, NO_COLOR: "1", VC_BENCH_USAGE_FILE: usage },
          },
        );
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr.on("data", (d: Buffer) => (out += d.toString()));
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
          child.once("exit", (c2, s) => r([c2, s])),
        );
        expect(out).to.not.match(/heap out of memory|Allocation failed/);
        expect(signal, out.slice(-2000)).to.equal(null);
        expect(code, out.slice(-2000)).to.equal(0);
        expect(out).to.match(/reconciled 1 clusters? .*1 applied/);
        const peak = (JSON.parse(readFileSync(usage, "utf8")) as { maxRssKiB: number }).maxRssKiB / 1024;
        expect(peak, "peak resident MiB").to.be.at.most(Number(/^(\d+)Mi$/.exec(c.resources.limits.memory)![1]));
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );

  it(
    "#38.1: 280 ConfigMaps of 900 KB the syncer labels as another cluster's inventory: a pass, vc apply and vc " +
      "diff under the Deployment's flags complete within its memory limit",
    async () => {
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo });
      cpSync(join(ROOT, "clusters", "platform"), join(repo, "clusters", "platform"), { recursive: true });
      git("add", "-A");
      git("commit", "-qm", "platform");
      const applied = await runVc([
        "apply",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        reconciler,
        "--cluster",
        "platform",
      ]);
      expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
      const owner = (
        await kube().kubectl([
          "-n",
          "vc-platform",
          "get",
          "statefulset",
          "platform",
          "-o",
          "jsonpath={.metadata.labels.vc\\.orch\\.io/owner}",
        ])
      ).stdout.trim();
      const pad = "x".repeat(900 * 1024);
      await mapLimit(
        Array.from({ length: 280 }, (_, i) => i),
        8,
        (i) =>
          syncer.request("POST", "/api/v1/namespaces/vc-minimal/configmaps", {
            body: {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: {
                name: `planted-${i}`,
                namespace: "vc-minimal",
                labels: { "vc.orch.io/inventory": "platform", ...(owner ? { "vc.orch.io/owner": owner } : {}) },
              },
              data: { pad },
            },
          }),
      );
      const host = ["--target", "kube", "--kubeconfig", reconciler];
      const pass = await underDeployment(["reconcile", "--once", "--repo", repo, ...host]);
      expect(pass.code, pass.out.slice(-2000)).to.equal(0);
      expect(pass.peakMiB, "reconcile --once peak resident MiB").to.be.at.most(memoryLimitMiB());
      const apply = await underDeployment(["apply", repo, ...host, "--cluster", "minimal"]);
      expect(apply.code, apply.out.slice(-2000)).to.equal(0);
      expect(apply.peakMiB, "vc apply peak resident MiB").to.be.at.most(memoryLimitMiB());
      const diff = await underDeployment(["diff", repo, ...host, "--exit-code"]);
      expect(diff.code, diff.out.slice(-2000)).to.equal(0);
      expect(diff.peakMiB, "vc diff peak resident MiB").to.be.at.most(memoryLimitMiB());
      // Nothing planted was written, pruned or recorded.
      const left = await syncer.request<{ items: KubeObject[] }>("GET", "/api/v1/namespaces/vc-minimal/configmaps", {
        query: { labelSelector: "vc.orch.io/inventory=platform" },
      });
      expect(left.items).to.have.length(280);
      const managers = left.items.flatMap(
        (o) => (o.metadata.managedFields as Array<{ manager?: string }> | undefined) ?? [],
      );
      expect(managers.filter((m) => m.manager === "vc")).to.deep.equal([]);
    },
  );
});
