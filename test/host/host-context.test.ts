// While `vc connect` has switched the kubeconfig to a virtual cluster, every command that reads the host still
// reaches the host: the shared kubeconfig loader follows the connect record back to the host context.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump, load } from "js-yaml";
import { CONNECT_EXTENSION } from "../../src/host/kubeconfig-file.js";
import { loadKubeConfig } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

describe("host: the host context while connected to a virtual cluster", () => {
  let server: KubeServer;
  let dir: string;
  let kubeconfig: string;
  before(async () => {
    server = await startKubeServer();
    dir = mkdtempSync(join(tmpdir(), "vc-host-context-"));
    // The host's kubeconfig plus what `vc connect` adds: a virtual cluster's context, current, recording the host's.
    const doc = load(readFileSync(server.kubeconfigPath, "utf8")) as Record<string, any>;
    doc.clusters.push({ name: "virtual", cluster: { server: "http://127.0.0.1:1", "insecure-skip-tls-verify": true } });
    doc.contexts.push({
      name: "vc_shop",
      context: {
        cluster: "virtual",
        user: doc.contexts[0].context.user,
        extensions: [
          { name: CONNECT_EXTENSION, extension: { previousContext: "test", cluster: "shop", namespace: "vc-shop" } },
        ],
      },
    });
    doc["current-context"] = "vc_shop";
    kubeconfig = join(dir, "config");
    writeFileSync(kubeconfig, dump(doc));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads the context vc connect came from, unless one is named", () => {
    expect(loadKubeConfig({ kubeconfig }).getCurrentContext()).to.equal("test");
    expect(loadKubeConfig({ kubeconfig, context: "vc_shop" }).getCurrentContext()).to.equal("vc_shop");
  });

  it("lets vc diff --target kube read the host, not the virtual cluster", async () => {
    const repo = exampleRepo(["minimal"]);
    try {
      const r = await runVc(["diff", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/8 to create, 0 to update, 0 to delete, 0 unchanged\n$/);
      expect(server.countRequests({ method: "GET" })).to.be.greaterThan(0);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
