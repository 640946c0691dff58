// Time bounds on a real API server that stops answering (SIGSTOP): commands fail within --request-timeout, naming the
// server and the flag, and work again once the server goes on.
import { expect } from "chai";
import { runVc } from "../support/vc.js";
import { useRealKube } from "../support/real-kube.js";

describe("e2e: vc against an API server that stopped answering", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  const host = () => ["--kubeconfig", kube().kubeconfigPath];
  afterEach(() => kube().thaw());

  it("answers while the server runs", async () => {
    const res = await runVc(["status", "--target", "kube", ...host()]);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.include("no cluster has been reconciled on this target");
  });

  for (const [command, args] of [
    ["vc status", ["status", "--target", "kube"]],
    ["vc list", ["list"]],
  ] as const) {
    it(`${command} fails within --request-timeout 3s, naming the server and the flag`, async () => {
      kube().freeze();
      const t0 = Date.now();
      const res = await runVc(["--request-timeout", "3s", ...args, ...host()]);
      const waited = (Date.now() - t0) / 1000;
      expect(res.code, res.stdout + res.stderr).to.equal(2);
      expect(res.stderr).to.include(`the API server ${kube().url} did not answer`).and.include("within 3s").and.include("--request-timeout");
      // It gave up at the budget, not before (a lower bound: load only makes it later; the test's timeout bounds a hang).
      expect(waited).to.be.at.least(2.9);
    });
  }

  it("fails within the default 30 s when no timeout is given (it used to hang for minutes)", async () => {
    kube().freeze();
    const t0 = Date.now();
    const res = await runVc(["status", "--target", "kube", ...host()]);
    const waited = (Date.now() - t0) / 1000;
    expect(res.code).to.equal(2);
    expect(res.stderr).to.include("within 30s");
    expect(waited).to.be.at.least(29);
  });

  it("answers again once the server goes on", async () => {
    kube().freeze();
    kube().thaw();
    const res = await runVc(["status", "--target", "kube", ...host()]);
    expect(res.code, res.stderr).to.equal(0);
  });
});
