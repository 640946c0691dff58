// The operations as a user who may read one host namespace only, on a real API server: what it may not read is
// reported as not visible, never a failure.
import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";

const ROOT = join(import.meta.dirname, "..", "..");
const USER = "team-minimal";
/** A user who may read the control plane's StatefulSet, pods, events and claims in vc-minimal, not its Deployments. */
const PARTIAL = "minimal-oncall";

describe("e2e: vc list, describe and doctor as a namespace-scoped user", function () {
  this.timeout(120_000);
  const kube = useRealKube({ users: [{ name: USER }, { name: PARTIAL }] });
  let repo: string;
  const asUser = (...args: string[]) => runVc([...args, "--kubeconfig", kube().kubeconfigFor(USER)], { cwd: repo });

  before(async () => {
    repo = mkdtempSync(join(tmpdir(), "vc-e2e-scoped-"));
    cpSync(join(ROOT, "clusters"), join(repo, "clusters"), { recursive: true });
    await installExampleCrds(kube());
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    // The user reads everything in vc-minimal and nothing else (the view of a tenant's on-call engineer).
    const role = await kube().kubectl([
      "-n",
      "vc-minimal",
      "create",
      "role",
      "reader",
      "--verb=get,list,watch",
      "--resource=pods,pods/log,services,endpoints,configmaps,secrets,events,statefulsets,deployments,persistentvolumeclaims,serviceaccounts,roles,rolebindings,resourcequotas,limitranges",
    ]);
    expect(role.code, role.stderr).to.equal(0);
    const binding = await kube().kubectl([
      "-n",
      "vc-minimal",
      "create",
      "rolebinding",
      "reader",
      "--role=reader",
      `--user=${USER}`,
    ]);
    expect(binding.code, binding.stderr).to.equal(0);
    const partial = [
      ["-n", "vc-minimal", "create", "role", "oncall", "--verb=get,list", "--resource=pods,statefulsets,events,pvc"],
      ["-n", "vc-minimal", "create", "rolebinding", "oncall", "--role=oncall", `--user=${PARTIAL}`],
    ];
    for (const args of partial) {
      const res = await kube().kubectl(args);
      expect(res.code, res.stderr).to.equal(0);
    }
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("vc list shows the visible cluster and marks the others not visible, exit 0", async () => {
    const res = await asUser("list");
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stdout).to.match(/minimal/);
    expect(res.stdout).to.match(/not visible to you/);
  });

  it("vc describe works for the visible cluster and says not visible for another, never exit 2", async () => {
    const mine = await asUser("describe", "minimal");
    expect(mine.code, mine.stdout + mine.stderr).to.equal(0);
    expect(mine.stdout).to.include("minimal");
    const other = await asUser("describe", "platform");
    expect(other.code, other.stdout + other.stderr).to.not.equal(2);
    expect(other.stdout + other.stderr).to.match(/not visible to you/i);
  });

  it(
    "vc doctor runs its checks for the visible cluster, lists what it may not read as not visible, and never " +
      "exits 2",
    async () => {
      const res = await asUser("doctor", "minimal");
      // No pod ever runs on this server: the StatefulSet's missing pod is an error; persistence off (the default) a
      // note.
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stdout).to.include("ERROR [control-plane-pod] StatefulSet vc-minimal/minimal");
      expect(res.stdout).to.include("NOTE [persistence] StatefulSet vc-minimal/minimal");
      // Permissions are asked of the server, and this user may not ask: said, not guessed.
      expect(res.stdout).to.include(
        "not checked (access): you may not create SubjectAccessReviews, so the permission checks could not be made",
      );
      expect(res.stdout + res.stderr, res.stdout + res.stderr).to.not.match(/forbidden/i);
      const other = await asUser("doctor", "platform");
      expect(other.code, other.stdout + other.stderr).to.equal(0);
      expect(other.stdout).to.include("virtual cluster platform (namespace vc-platform): not visible to you");
    },
  );

  it(
    "vc doctor as a user who may not read Deployments runs the other checks, says what it skipped, exits 1 on " +
      "an error",
    async () => {
      const res = await runVc(["doctor", "minimal", "--kubeconfig", kube().kubeconfigFor(PARTIAL)], { cwd: repo });
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stdout).to.not.include("nothing checked");
      // The control plane's missing pod is found from the StatefulSet and the pods, which this user may read.
      expect(res.stdout).to.include("ERROR [control-plane-pod] StatefulSet vc-minimal/minimal");
      expect(res.stdout).to.include("not checked (deployments): not visible to you");
      const json = await runVc(["doctor", "minimal", "-o", "json", "--kubeconfig", kube().kubeconfigFor(PARTIAL)], {
        cwd: repo,
      });
      expect(json.code, json.stderr).to.equal(1);
      const report = JSON.parse(json.stdout) as { notVisible?: string; notChecked: Record<string, string> };
      expect(report.notVisible).to.equal(undefined);
      expect(report.notChecked.deployments).to.equal("not visible to you");
      expect(report.notChecked).to.not.have.property("pods");
    },
  );
});
