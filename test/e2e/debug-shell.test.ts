// vc debug shell on a real API server: an exec the server refuses is reported with the server's reason.
import { expect } from "chai";
import { useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

const NS = "vc-shell";
const USER = "pod-reader";

describe("e2e: vc debug shell refused by the server", function () {
  this.timeout(120_000);
  const kube = useRealKube({ users: [{ name: USER }] });
  const k = async (args: string[]) => {
    const res = await kube().kubectl(args);
    expect(res.code, res.stderr).to.equal(0);
  };

  before(async () => {
    await k(["create", "namespace", NS]);
    // The control plane's pod, reported running as a kubelet would (no kubelet runs here).
    const created = await kube().request("POST", `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "shop-0", labels: { app: "vc", release: "shop" } },
      spec: { containers: [{ name: "syncer", image: "registry.example/vc/syncer:1" }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const status = await kube().request("PUT", `/api/v1/namespaces/${NS}/pods/shop-0/status`, {
      ...(created.body as object),
      status: { phase: "Running" },
    });
    expect(status.status, JSON.stringify(status.body)).to.equal(200);
    await k(["-n", NS, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods"]);
    await k(["-n", NS, "create", "rolebinding", "pod-reader", "--role=pod-reader", `--user=${USER}`]);
  });

  it(
    "a user who may read the pod but not exec into it gets the server's reason, not an HTTP " + "status alone",
    async () => {
      const res = await runVc(["debug", "shell", "shop", "-n", NS, "--kubeconfig", kube().kubeconfigFor(USER)]);
      expect(res.code, res.stdout + res.stderr).to.equal(2);
      expect(res.stderr).to.match(new RegExp(`^error: cannot open a shell in ${NS}/shop-0: HTTP 403: .*pods/exec`));
      expect(res.stderr).to.not.contain("Unexpected server response");
    },
  );
});
