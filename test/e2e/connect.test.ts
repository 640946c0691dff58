// `vc connect` and `vc disconnect` with two real API servers: the host, and a second one playing the virtual cluster
// whose kubeconfig sits in the host Secret vc-<name> (key "config"), as the control plane writes it.
import { expect } from "chai";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { runVc } from "../support/vc.js";
import { servesSelfSubjectReview, useRealKube } from "../support/real-kube.js";

describe("e2e: vc connect to a virtual cluster served by a second real API server", function () {
  this.timeout(120_000);
  const host = useRealKube();
  const virtual = useRealKube();
  let dir: string;
  let kubeconfig: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-connect-"));
    kubeconfig = join(dir, "config");
    copyFileSync(host().kubeconfigPath, kubeconfig);
    expect((await host().kubectl(["create", "namespace", "vc-team-a"])).code).to.equal(0);
    const secret = await host().kubectl([
      "-n",
      "vc-team-a",
      "create",
      "secret",
      "generic",
      "vc-team-a",
      `--from-file=config=${virtual().kubeconfigPath}`,
    ]);
    expect(secret.code, secret.stderr).to.equal(0);
    expect((await virtual().kubectl(["create", "namespace", "only-in-the-virtual-cluster"])).code).to.equal(0);
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  const kubectlWith = (args: string[]) => host().kubectl(["--kubeconfig", kubeconfig, ...args]);

  it("connect switches the kubeconfig to the virtual cluster: kubectl reaches the second server", async () => {
    const res = await runVc(["connect", "team-a", "--kubeconfig", kubeconfig, "--namespace", "vc-team-a"], {
      env: { KUBECONFIG: kubeconfig },
    });
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    // Both branches, by the virtual server's discovery: a server with SelfSubjectReview (1.27+) says who the user is;
    // one without (1.20) is asked with a TokenReview, which the admin may make, and the server names the token's user.
    if (await servesSelfSubjectReview(virtual()))
      expect(res.stdout).to.contain('the virtual API server answers: you are "admin" (SelfSubjectReview)');
    else expect(res.stdout).to.contain('the virtual API server answers: you are "admin" (TokenReview)');
    const namespaces = await kubectlWith(["get", "namespaces", "-o", "name"]);
    expect(namespaces.code, namespaces.stderr).to.equal(0);
    expect(namespaces.stdout).to.include("namespace/only-in-the-virtual-cluster");
    expect(namespaces.stdout).to.not.include("namespace/vc-team-a");
    expect(readFileSync(kubeconfig, "utf8")).to.include(virtual().url);
  });

  it("while connected, vc still finds the host for host commands; disconnect returns kubectl to the host", async () => {
    const listed = await runVc(["list", "--kubeconfig", kubeconfig], { env: { KUBECONFIG: kubeconfig } });
    expect(listed.code, listed.stdout + listed.stderr).to.equal(0);
    expect(listed.stdout).to.include("minimal");
    expect(listed.stdout + listed.stderr).to.not.include(virtual().url);
    const res = await runVc(["disconnect", "--kubeconfig", kubeconfig], { env: { KUBECONFIG: kubeconfig } });
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    const namespaces = await kubectlWith(["get", "namespaces", "-o", "name"]);
    expect(namespaces.stdout).to.include("namespace/vc-team-a");
    expect(namespaces.stdout).to.not.include("namespace/only-in-the-virtual-cluster");
  });

  it(
    "refuses a virtual API server that does not answer, leaving the kubeconfig as it was and saying how to " +
      "reach it",
    async () => {
      const far = join(dir, "far-config");
      writeFileSync(
        far,
        readFileSync(virtual().kubeconfigPath, "utf8").replace(
          /server: \S+/,
          "server: https://far.vc-team-a.svc.cluster.invalid:443",
        ),
      );
      const secret = await host().kubectl([
        "-n",
        "vc-team-a",
        "create",
        "secret",
        "generic",
        "vc-far",
        `--from-file=config=${far}`,
      ]);
      expect(secret.code, secret.stderr).to.equal(0);
      const before = readFileSync(kubeconfig, "utf8");
      const res = await runVc(["connect", "far", "--kubeconfig", kubeconfig, "--namespace", "vc-team-a"], {
        env: { KUBECONFIG: kubeconfig },
      });
      expect(res.code, res.stdout + res.stderr).to.equal(2);
      expect(res.stderr)
        .to.contain("does not answer")
        .and.contain("your kubeconfig was not changed")
        .and.contain("kubectl port-forward")
        .and.contain("--server https://localhost:8443");
      expect(readFileSync(kubeconfig, "utf8")).to.equal(before);
    },
  );

  it("disconnect after connecting to two virtual clusters removes every entry vc added", async () => {
    const original = load(readFileSync(kubeconfig, "utf8")) as Record<
      "contexts" | "clusters" | "users",
      Array<{ name: string }>
    >;
    const secret = await host().kubectl([
      "-n",
      "vc-team-a",
      "create",
      "secret",
      "generic",
      "vc-team-b",
      `--from-file=config=${virtual().kubeconfigPath}`,
    ]);
    expect(secret.code, secret.stderr).to.equal(0);
    for (const name of ["team-a", "team-b"]) {
      const res = await runVc(["connect", name, "--kubeconfig", kubeconfig, "--namespace", "vc-team-a"], {
        env: { KUBECONFIG: kubeconfig },
      });
      expect(res.code, res.stdout + res.stderr).to.equal(0);
    }
    expect((await kubectlWith(["config", "get-contexts", "-o", "name"])).stdout.trim().split("\n")).to.have.length(
      original.contexts.length + 2,
    );
    const res = await runVc(["disconnect", "--kubeconfig", kubeconfig], { env: { KUBECONFIG: kubeconfig } });
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    const after = load(readFileSync(kubeconfig, "utf8")) as typeof original;
    for (const section of ["contexts", "clusters", "users"] as const)
      expect(
        after[section].map((e) => e.name),
        section,
      ).to.deep.equal(original[section].map((e) => e.name));
    const namespaces = await kubectlWith(["get", "namespaces", "-o", "name"]);
    expect(namespaces.stdout).to.include("namespace/vc-team-a");
  });
});
