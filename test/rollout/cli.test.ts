// vc rollout status|pause|resume|abort against the API test server: output formats, the request written and nothing
// else, exit codes (0 done, 1 nothing to act on, 2 usage), --help.
import { expect } from "chai";
import { KubeClient } from "../../src/host/client.js";
import { begin } from "../../src/rollout/step.js";
import { RolloutStore, rolloutName, REQUEST_FIELD_MANAGER } from "../../src/rollout/store.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";

describe("vc rollout", function () {
  this.timeout(30_000);
  let kube: KubeServer;
  let client: KubeClient;
  let store: RolloutStore;
  const host = () => ["--owner", "platform", "--kubeconfig", kube.kubeconfigPath, "--context", "test"];
  const D = "d".repeat(64);
  const O = "0".repeat(64);

  before(async () => {
    kube = await startKubeServer();
    client = KubeClient.open({ kubeconfig: kube.kubeconfigPath, context: "test" });
    store = new RolloutStore(client, "vc-system");
  });
  after(async () => {
    client.close();
    await kube.close();
  });

  it("says there is no rollout (exit 1) and refuses to act on none", async () => {
    const s = await runVc(["rollout", "status", ...host()]);
    expect(s.code).to.equal(1);
    expect(s.stdout).to.contain("no rollout for source platform in vc-system");
    const p = await runVc(["rollout", "pause", ...host()]);
    expect(p.code).to.equal(1);
    expect(p.stderr).to.contain("nothing to pause: no rollout");
    expect(kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))).to.equal(undefined);
  });

  it("shows phase, waves, clusters and health as a table, with --clusters, and as JSON and YAML", async () => {
    const r = begin({
      source: "platform",
      to: { digest: D, revision: "abc123" },
      waves: [
        { name: "canary", clusters: ["shop"] },
        { name: "rest", clusters: ["a", "b"] },
      ],
      from: { shop: O, a: O, b: O },
      now: Date.parse("2026-11-25T10:00:00Z"),
    });
    r.moved.shop = { from: O, at: "to", health: "Degraded", reason: "pod shop-0 CrashLoopBackOff", movedAt: r.started };
    r.phase = "Halted";
    r.message = "wave canary halted: cluster shop is Degraded: pod shop-0 CrashLoopBackOff";
    await store.write(r, undefined);
    const table = await runVc(["rollout", "status", ...host()]);
    expect(table.code).to.equal(0);
    expect(table.stdout).to.contain(`rollout ${D.slice(0, 12)}: Halted, wave 1/2 (canary)`);
    expect(table.stdout).to.contain("wave canary halted: cluster shop is Degraded: pod shop-0 CrashLoopBackOff");
    expect(table.stdout)
      .to.match(/canary\s+current\s+1\s+1\s+0/)
      .and.match(/rest\s+pending\s+2\s+0\s+0/);
    expect(table.stdout).to.not.match(/CLUSTER\s+BASE/);
    const listed = await runVc(["rollout", "status", "--clusters", ...host()]);
    expect(listed.stdout)
      .to.match(/canary\s+shop\s+to\s+Degraded\s+pod shop-0 CrashLoopBackOff/)
      .and.match(/rest\s+a\s+from\s+-/);
    const json = JSON.parse((await runVc(["rollout", "status", "-o", "json", ...host()])).stdout);
    expect(json).to.deep.include({ id: D.slice(0, 12), phase: "Halted", wave: { index: 0, name: "canary", of: 2 } });
    expect(json.waves[0]).to.deep.equal({
      name: "canary",
      state: "current",
      count: 1,
      moved: 1,
      healthy: 0,
      clusters: [{ name: "shop", base: "to", health: "Degraded", reason: "pod shop-0 CrashLoopBackOff" }],
    });
    const yaml = await runVc(["rollout", "status", "-o", "yaml", ...host()]);
    expect(yaml.stdout).to.contain("phase: Halted");
  });

  it("pause, resume and abort write the request alone (field manager vc-rollout) and say so", async () => {
    const before = (await store.read("platform")).record!;
    for (const verb of ["pause", "resume", "abort"] as const) {
      const run = await runVc(["rollout", verb, ...host()]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.contain(`asked the reconciler to ${verb} rollout ${D.slice(0, 12)}`);
      const stored = await store.read("platform");
      expect(stored.request).to.include({ action: verb });
      expect(stored.request!.by).to.be.a("string").and.not.equal("");
      const { request: _r, ...record } = stored.record!;
      expect(record).to.deep.equal(before);
    }
    const cm = kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))!;
    const managers = (cm.metadata.managedFields as Array<{ manager: string }>).map((m) => m.manager);
    expect(managers).to.include(REQUEST_FIELD_MANAGER);
    const json = JSON.parse((await runVc(["rollout", "abort", "-o", "json", ...host()])).stdout);
    expect(json).to.deep.include({ requested: true, rollout: D.slice(0, 12), phase: "Halted" });
  });

  it("refuses to act on a finished rollout (exit 1), and usage errors exit 2", async () => {
    const stored = await store.read("platform");
    await store.write({ ...stored.record!, phase: "Completed" }, stored.resourceVersion);
    const r = await runVc(["rollout", "resume", ...host()]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain("is already Completed");
    expect((await runVc(["rollout", "status", "-o", "xml", ...host()])).code).to.equal(2);
    expect(
      (await runVc(["rollout", "status", "--owner", "not a label", "--kubeconfig", kube.kubeconfigPath])).code,
    ).to.equal(2);
  });

  it("has --help on each command", async () => {
    for (const cmd of [[], ["status"], ["pause"], ["resume"], ["abort"]]) {
      const h = await runVc(["rollout", ...cmd, "--help"]);
      expect(h.code).to.equal(0);
      expect(h.stdout).to.contain("Usage: vc rollout");
    }
  });
});
