// Consistent commands on a real API server: apply --dry-run where the namespace does not exist yet (the server's own
// NotFound), the prune guard after a removed cluster was pruned down to its kept Namespace (vc apply and the
// reconciler), and an unknown cluster name.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { useRealKube } from "../support/real-kube.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "clusters");

describe("e2e: consistent commands on a real API server", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let parent: string;
  let repo: string;
  const target = () => ["--target", "kube", "--kubeconfig", kube().kubeconfigPath];
  const vc = (command: string, ...args: string[]) => runVc([command, repo, ...target(), ...args]);
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      encoding: "utf8",
    });
  const writes = () =>
    kube()
      .writes("admin")
      .filter((w) => w.code < 400 && !/[?&]dryRun=All/.test(w.uri));

  before(() => {
    parent = mkdtempSync(join(tmpdir(), "vc-e2e-commands-"));
    repo = join(parent, "fleet");
    cpSync(join(EXAMPLE, "minimal"), join(repo, "clusters", "minimal"), { recursive: true });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-q", "-m", "fleet");
  });
  after(() => parent && rmSync(parent, { recursive: true, force: true }));

  it(
    "apply --dry-run asks the server about every object; those in the namespace it would create are reported as " +
      "not checked",
    async () => {
      const before = writes().length;
      const r = await vc("apply", "--dry-run");
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^would create Namespace vc-minimal$/m);
      // Nothing reads as done.
      expect(r.stdout).not.to.match(/^(created|updated|deleted) /m);
      expect(r.stdout).to.match(
        /^StatefulSet vc-minimal\/minimal would be created \(namespace vc-minimal does not exist yet, not checked by the server\)$/m,
      );
      expect(r.stdout).to.match(
        /cluster minimal: (\d+) to create, .* \(dry run; (\d+) not checked by the server: namespace vc-minimal does not exist yet\)/,
      );
      expect(r.stdout).not.to.match(/^(failed|would fail) /m);
      // The real server answered every one: a dry-run request per object, NotFound for those inside vc-minimal.
      const dryRuns = kube()
        .writes("admin")
        .filter((w) => /[?&]dryRun=All/.test(w.uri));
      expect(dryRuns.filter((w) => w.namespace === "vc-minimal" && w.code === 404).length).to.be.greaterThan(5);
      expect(writes().length - before).to.equal(0);
      expect((await kube().kubectl(["get", "namespace", "vc-minimal"])).code).to.not.equal(0);
    },
  );

  it(
    "after a removed cluster is pruned down to its kept Namespace, later runs are not stopped by the " + "prune guard",
    async () => {
      expect((await vc("apply")).code).to.equal(0);
      rmSync(join(repo, "clusters", "minimal"), { recursive: true });
      git("add", "-A");
      git("commit", "-q", "-m", "remove minimal");

      const guarded = await vc("apply", "--prune");
      expect(guarded.code, guarded.stdout).to.equal(1);
      expect(guarded.stdout).to.contain("! prune guard: cluster minimal would delete all");
      const allowed = await vc("apply", "--prune", "--allow-mass-prune");
      expect(allowed.code, allowed.stdout + allowed.stderr).to.equal(0);
      expect(allowed.stdout).to.contain("kept Namespace vc-minimal");
      expect(
        (
          await kube().kubectl([
            "get",
            "namespace",
            "vc-minimal",
            "-o",
            "jsonpath={.metadata.labels.vc\\.orch\\.io/inventory}",
          ])
        ).stdout,
      ).to.equal("minimal");

      const before = writes().length;
      const later = await vc("apply", "--prune");
      expect(later.code, later.stdout).to.equal(0);
      expect(later.stdout).to.contain("kept Namespace vc-minimal").and.not.contain("prune guard");
      const diff = await vc("diff", "--prune", "--exit-code");
      expect(diff.code, diff.stdout).to.equal(0);
      expect(writes().length - before).to.equal(0);

      // The reconciler (no --allow-mass-prune) finds the cluster by its Namespace: deleted, not blocked; no status
      // written.
      const pass = await runVc([
        "reconcile",
        "--once",
        "--repo",
        repo,
        ...target(),
        "--cache-dir",
        join(parent, "cache"),
      ]);
      expect(pass.code, pass.stdout + pass.stderr).to.equal(0);
      expect(pass.stdout + pass.stderr).not.to.contain("blocked");
      // Its record keeps the kept Namespace (so that nobody else claims it) and no status.
      const record = await kube().kubectl([
        "-n",
        "vc-system",
        "get",
        "configmap",
        "-l",
        "vc.orch.io/record=record,vc.orch.io/managed-by=minimal",
        "-o",
        "jsonpath={.items[*].data.result}|{.items[*].data.inventory}",
      ]);
      expect(record.stdout).to.equal('|["Namespace//vc-minimal"]');
      expect((await kube().kubectl(["-n", "vc-minimal", "get", "configmap", "vc-status"])).code).to.not.equal(0);
      expect(writes().length - before).to.equal(0);
    },
  );

  it("an unknown cluster name: exit 1 and the same message in diff, apply and doctor", async () => {
    for (const args of [
      ["diff", repo, "--cluster", "nope", ...target()],
      ["apply", repo, "--cluster", "nope", ...target()],
      ["doctor", "nope", "--repo", repo, "--kubeconfig", kube().kubeconfigPath],
    ]) {
      const r = await runVc(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).to.equal(1);
      expect(r.stderr).to.match(/^error: unknown cluster "nope": no folder clusters\/nope in \S+ and /);
    }
  });
});
