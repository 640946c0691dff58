// vc version: this vc's version; with --target kube the reconciler's (its Deployment's image) and the server's.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";
import { packageInfo } from "../../src/model/package.js";
import { imageVersion } from "../../src/ops/version.js";

describe("vc version", () => {
  let kube: KubeServer;
  before(async () => {
    kube = await startKubeServer({ namespaces: ["default", "vc-system"] });
  });
  after(() => kube.close());

  it("prints this vc's version, and as data", async () => {
    const text = await runVc(["version"]);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.match(new RegExp(`^vc: +${packageInfo().version.replaceAll(".", "\\.")} \\(node v`));
    const data = JSON.parse((await runVc(["version", "-o", "json"])).stdout) as { client: { version: string } };
    expect(data.client.version).to.equal(packageInfo().version);
  });

  it("with --target kube reads the reconciler's image from its Deployment and the server's version", async () => {
    const none = await runVc(["version", "--target", "kube", "--kubeconfig", kube.kubeconfigPath]);
    expect(none.code).to.equal(0);
    expect(none.stdout).to.match(/reconciler: +unknown \(no Deployment labelled app.kubernetes.io\/name=vc-reconciler/);
    kube.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "vc-reconciler",
        namespace: "vc-system",
        labels: { "app.kubernetes.io/name": "vc-reconciler" },
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "r" } },
        template: {
          metadata: { labels: { app: "r" } },
          spec: { containers: [{ name: "r", image: "ghcr.io/x/vc:9.8.7" }] },
        },
      },
      status: { readyReplicas: 1 },
    });
    const res = await runVc(["version", "--target", "kube", "--kubeconfig", kube.kubeconfigPath, "-o", "json"]);
    expect(res.code, res.stderr).to.equal(0);
    const v = JSON.parse(res.stdout) as {
      reconciler: { version: string; ready: string };
      server: { gitVersion: string };
    };
    expect(v.reconciler).to.include({ version: "9.8.7", ready: "1/2" });
    expect(v.server.gitVersion).to.match(/^v1\.\d+/);
  });

  it("names an image's version by its tag or digest", () => {
    expect(imageVersion("ghcr.io/vc-project/vc:0.1.0")).to.equal("0.1.0");
    expect(imageVersion("localhost:5000/vc")).to.equal("latest");
    expect(imageVersion("vc@sha256:abc")).to.equal("sha256:abc");
  });

  it("--target dir: has no reconciler to ask: a usage error", async () => {
    const res = await runVc(["version", "--target", "dir:out"]);
    expect(res.code).to.equal(2);
  });
});
