// Changes a real API server refuses in place, and kinds it does not serve: found by the plan before any write.
import { expect } from "chai";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");

describe("e2e: unappliable changes and missing kinds on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const vc = (command: string, ...args: string[]) => runVc([command, repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, ...args]);
  const writes = () => kube().writes("admin").length;

  before(() => {
    repo = mkdtempSync(join(tmpdir(), "vc-e2e-plan-"));
    cpSync(EXAMPLE, join(repo, "clusters"), { recursive: true });
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  /** What the garbage collector does for propagationPolicy=Orphan: drop the `orphan` finalizer so the object goes. */
  function orphanFinalizerRemover(namespace: string, name: string) {
    let removed = false;
    let stopped = false;
    const path = `/apis/apps/v1/namespaces/${namespace}/statefulsets/${name}`;
    const loop = (async () => {
      while (!stopped) {
        const live = await kube().request<{ metadata?: { deletionTimestamp?: string; finalizers?: string[] } }>("GET", path);
        if (live.status === 200 && live.body.metadata?.deletionTimestamp && live.body.metadata.finalizers?.includes("orphan")) {
          const patched = await kube().request("PATCH", path, { metadata: { finalizers: live.body.metadata.finalizers.filter((f) => f !== "orphan") } }, { contentType: "application/merge-patch+json" });
          removed ||= patched.status === 200;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    return { removed: () => removed, stop: async () => ((stopped = true), await loop) };
  }

  it("without the mesh CRDs: one error for the mesh cluster naming the CRDs and the prerequisite, nothing of it applied, the others applied", async () => {
    const res = await vc("apply");
    expect(res.code, res.stdout + res.stderr).to.equal(1);
    const errors = res.stdout.split("\n").filter((l) => l.startsWith("! "));
    expect(errors, res.stdout).to.have.length(1);
    expect(errors[0]).to.include("cluster bookinfo").and.include("networking.mesh.io");
    expect(res.stdout + res.stderr).to.not.match(/404 Not Found/);
    const namespaces = await kube().kubectl(["get", "namespaces", "-o", "name"]);
    expect(namespaces.stdout).to.include("namespace/vc-minimal").and.include("namespace/vc-platform");
    expect(namespaces.stdout).to.not.include("namespace/team-bookinfo");
    await installMeshCrds(kube());
    const all = await vc("apply");
    expect(all.code, all.stdout + all.stderr).to.equal(0);
  });

  it("a persistence.size change is reported before any write and nothing of that cluster is applied", async () => {
    const values = join(repo, "clusters", "platform", "values.yaml");
    const text = readFileSync(values, "utf8");
    const size = /size:\s*(\S+)/.exec(text)![1]!;
    writeFileSync(values, text.replace(/size:\s*\S+/, "size: 50Gi").replace(/cpu: 200m/, "cpu: 250m"));
    const before = writes();
    const diff = await vc("diff", "--cluster", "platform");
    expect(diff.stdout).to.include("volumeClaimTemplates");
    const res = await vc("apply", "--cluster", "platform");
    expect(res.code, res.stdout + res.stderr).to.not.equal(0);
    expect(res.stdout + res.stderr).to.include("volumeClaimTemplates").and.include("--force");
    expect(writes() - before, JSON.stringify(kube().writes("admin").slice(before))).to.equal(0);
    const live = await kube().kubectl(["-n", "vc-platform", "get", "statefulset", "platform", "-o", "jsonpath={.spec.volumeClaimTemplates[0].spec.resources.requests.storage}"]);
    expect(live.stdout).to.equal(size);
  });

  it("--force recreates the StatefulSet with the new claim size, keeping its pods' volume claims", async () => {
    const claim = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-platform-0", namespace: "vc-platform", labels: { release: "platform" } },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5Gi" } } },
    };
    const created = await kube().request("POST", "/api/v1/namespaces/vc-platform/persistentvolumeclaims", claim);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const uid = (await kube().kubectl(["-n", "vc-platform", "get", "statefulset", "platform", "-o", "jsonpath={.metadata.uid}"])).stdout;

    // No garbage collector runs here: play its part, removing the orphan finalizer once the StatefulSet is being deleted.
    const collector = orphanFinalizerRemover("vc-platform", "platform");
    const res = await vc("apply", "--cluster", "platform", "--force").finally(() => collector.stop());
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(collector.removed()).to.equal(true);
    expect(res.stdout).to.include("expan");
    const sts = JSON.parse((await kube().kubectl(["-n", "vc-platform", "get", "statefulset", "platform", "-o", "json"])).stdout);
    expect(sts.metadata.uid).to.not.equal(uid);
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.equal("50Gi");
    expect((await kube().kubectl(["-n", "vc-platform", "get", "pvc", "data-platform-0"])).code).to.equal(0);
    const deletes = kube().writes("admin").filter((w) => w.verb === "delete" && w.resource === "statefulsets");
    expect(deletes.length).to.be.greaterThan(0);
    const clean = await vc("diff", "--exit-code");
    expect(clean.code, clean.stdout).to.equal(0);
  });
});
