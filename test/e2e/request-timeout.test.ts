// Time bounds on a real API server that stops answering (SIGSTOP): commands fail within --request-timeout, naming the
// server and the flag, and work again once the server goes on.
import { expect } from "chai";
import { runVc } from "../support/vc.js";
import { useRealKube } from "../support/real-kube.js";
import { KubeClient, MAX_SOCKETS, RequestTimeoutError } from "../../src/host/client.js";
import { openSocketsTo } from "../support/open-sockets.js";

describe("e2e: vc against an API server that stopped answering", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  const host = () => ["--kubeconfig", kube().kubeconfigPath];
  afterEach(() => kube().thaw());
  /** This process's sockets to the API server that were not open at `before`. */
  const newSockets = (before: Set<string>) => [...openSocketsTo(kube().port)].filter((s) => !before.has(s));

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
      expect(res.stderr)
        .to.include(`the API server ${kube().url} did not answer`)
        .and.include("within 3s")
        .and.include("--request-timeout");
      // It gave up at the budget, not before (a lower bound: load only makes it later; the test's timeout bounds a
      // hang).
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

  it(
    "closes the sockets of requests that ran out of their budget: a client that keeps retrying holds " + "none open",
    async () => {
      const before = openSocketsTo(kube().port);
      const client = KubeClient.open({ kubeconfig: kube().kubeconfigPath, budget: { timeoutMs: 1000 } });
      try {
        await client.request("GET", "/version");
        expect(newSockets(before), "the answered request's connection, kept for the next").to.have.length(1);
        kube().freeze();
        for (let i = 0; i < 5; i++) {
          const err = await client.request("GET", "/api/v1/namespaces").then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err, String(err)).to.be.instanceOf(RequestTimeoutError);
        }
        const errors = await Promise.all(
          Array.from({ length: MAX_SOCKETS + 8 }, () =>
            client.request("GET", "/api/v1/namespaces").then(
              () => undefined,
              (e: unknown) => e,
            ),
          ),
        );
        expect(errors.every((e) => e instanceof RequestTimeoutError)).to.equal(true);
        expect(newSockets(before), "sockets the client still holds to the stopped server").to.deep.equal([]);
        kube().thaw();
        await client.request("GET", "/version");
        expect(newSockets(before)).to.have.length(1);
      } finally {
        client.close();
      }
    },
  );

  it("answers again once the server goes on", async () => {
    kube().freeze();
    kube().thaw();
    const res = await runVc(["status", "--target", "kube", ...host()]);
    expect(res.code, res.stderr).to.equal(0);
  });
});
