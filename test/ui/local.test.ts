// vc ui --target kube: the fleet as vc list reads it with the user's kubeconfig (rows of the same shape as vc list -o
// json), a cluster's objects and their health, and vc doctor's report on request.
import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";
import { LocalFleet } from "../../src/ui/local.js";
import type { DoctorReport } from "../../src/ops/doctor/report.js";

const ROOT = join(import.meta.dirname, "../..");

describe("ui: vc ui's fleet on a host", () => {
  let kube: KubeServer;
  let dir: string;
  let fleet: LocalFleet;
  before(async () => {
    kube = await startKubeServer();
    dir = mkdtempSync(join(tmpdir(), "vc-ui-local-"));
    cpSync(join(ROOT, "clusters", "minimal"), join(dir, "clusters", "minimal"), { recursive: true });
    cpSync(join(ROOT, "clusters", "platform"), join(dir, "clusters", "platform"), { recursive: true });
    const applied = await runVc(["apply", dir, "--target", "kube", "--kubeconfig", kube.kubeconfigPath]);
    expect(applied.code, applied.stderr).to.equal(0);
    fleet = await LocalFleet.open({ path: dir, target: "kube", kubeconfig: kube.kubeconfigPath, refreshMs: 60_000 });
  });
  after(async () => {
    await fleet?.close();
    await kube?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the rows vc list -o json prints", async () => {
    const listed = await runVc(["list", "--repo", dir, "--kubeconfig", kube.kubeconfigPath, "-o", "json"]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.deep.equal(JSON.parse(JSON.stringify(fleet.rows())));
    expect(fleet.rows().map((r) => [r.name, r.drift, r.labels])).to.deep.equal([
      ["minimal", "no", {}],
      ["platform", "no", { tier: "prod", canary: "true" }],
    ]);
  });

  it("reads a cluster's objects and their health, and vc doctor's report on request", async () => {
    const detail = (await fleet.cluster("minimal"))!;
    expect(detail.objects?.map((o) => o.object)).to.include("StatefulSet vc-minimal/minimal");
    expect(detail.status?.history).to.have.length(1);
    expect(detail.diff?.changes).to.deep.equal([]);
    const report = (await fleet.doctor("minimal")) as DoctorReport;
    expect(report).to.include({ cluster: "minimal", namespace: "vc-minimal" });
    expect(report.findings.length).to.be.greaterThan(0);
    expect(await fleet.cluster("nosuch")).to.equal(undefined);
  });
});
