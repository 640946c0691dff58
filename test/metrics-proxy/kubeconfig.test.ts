import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromKubeconfig, inCluster } from "../../src/metrics-proxy/kubeconfig.js";
import { addPod, get, proxyFor, startHost, type KubeServer } from "./fixture.js";

function kubeconfig(dir: string, cluster: string, user: string): string {
  const path = join(dir, "config");
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: other, context: {cluster: nope, user: nope}}, {name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {${cluster}}}]
users: [{name: u, user: {${user}}}]
`,
  );
  return path;
}

describe("metrics-proxy host transport", () => {
  const dir = mkdtempSync(join(tmpdir(), "vc-mp-kc-"));

  it(
    "reads server, CA, client certificate and token of the current context; relative files resolve " + "beside it",
    async () => {
      writeFileSync(join(dir, "ca.crt"), "CA");
      const t = await fromKubeconfig(
        kubeconfig(
          dir,
          `server: "https://10.0.0.1:6443", certificate-authority: ca.crt, tls-server-name: api`,
          `token: abc, client-certificate-data: ${Buffer.from("CERT").toString("base64")}, client-key-data: ` +
            `${Buffer.from("KEY").toString("base64")}`,
        ),
      );
      expect(t.server.toString()).to.equal("https://10.0.0.1:6443/");
      expect(t.tls.ca?.toString()).to.equal("CA");
      expect(t.tls.cert?.toString()).to.equal("CERT");
      expect(t.tls.key?.toString()).to.equal("KEY");
      expect(t.tls.servername).to.equal("api");
      expect(await t.headers()).to.deep.equal({ Authorization: "Bearer abc" });
    },
  );

  it("re-reads a token file on every request and supports insecure-skip-tls-verify and basic auth", async () => {
    writeFileSync(join(dir, "token"), "one\n");
    const t = await fromKubeconfig(
      kubeconfig(dir, `server: "https://h", insecure-skip-tls-verify: true`, "tokenFile: token"),
    );
    expect(t.tls.rejectUnauthorized).to.equal(false);
    expect(await t.headers()).to.deep.equal({ Authorization: "Bearer one" });
    writeFileSync(join(dir, "token"), "two\n");
    expect(await t.headers()).to.deep.equal({ Authorization: "Bearer two" });
    const basic = await fromKubeconfig(kubeconfig(dir, `server: "https://h"`, "username: u, password: p"));
    expect(await basic.headers()).to.deep.equal({ Authorization: `Basic ${Buffer.from("u:p").toString("base64")}` });
  });

  it("fails clearly without a usable current context", async () => {
    const path = join(dir, "bad");
    writeFileSync(path, "apiVersion: v1\nkind: Config\ncurrent-context: gone\ncontexts: []\n");
    let message = "";
    await fromKubeconfig(path).catch((e: Error) => (message = e.message));
    expect(message).to.equal('no current context "gone"');
  });

  it("uses the mounted service account in a cluster, re-reading its token", async () => {
    const sa = mkdtempSync(join(tmpdir(), "vc-mp-sa-"));
    writeFileSync(join(sa, "ca.crt"), "SACA");
    writeFileSync(join(sa, "token"), "sa-token");
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    try {
      delete process.env.KUBERNETES_SERVICE_HOST;
      expect(() => inCluster(sa)).to.throw(/not running in a cluster/);
      process.env.KUBERNETES_SERVICE_HOST = "fd00::1";
      process.env.KUBERNETES_SERVICE_PORT = "8443";
      const t = inCluster(sa);
      expect(t.server.toString()).to.equal("https://[fd00::1]:8443/");
      expect(t.tls.ca?.toString()).to.equal("SACA");
      expect(await t.headers()).to.deep.equal({ Authorization: "Bearer sa-token" });
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });

  describe("against the host test server", () => {
    let server: KubeServer;
    before(async () => {
      server = await startHost();
      await addPod(server, { cluster: "a", namespace: "default", name: "web", cpu: "11m" });
    });
    after(async () => {
      await server?.close();
    });

    it("runs a kubeconfig's exec credential plugin through client-node", async () => {
      const credential = JSON.stringify({
        apiVersion: "client.authentication.k8s.io/v1beta1",
        kind: "ExecCredential",
        status: { token: "admin" },
      });
      const path = join(mkdtempSync(join(tmpdir(), "vc-mp-exec-")), "config");
      writeFileSync(
        path,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          "current-context": "c",
          contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
          clusters: [{ name: "k", cluster: { server: server.url, "insecure-skip-tls-verify": true } }],
          users: [
            {
              name: "u",
              user: {
                exec: {
                  apiVersion: "client.authentication.k8s.io/v1beta1",
                  command: "sh",
                  args: ["-c", `echo '${credential}'`],
                  interactiveMode: "Never",
                },
              },
            },
          ],
        }),
      );
      const t = await fromKubeconfig(path);
      expect(await t.headers()).to.deep.equal({ Authorization: "Bearer admin" });
      const proxy = await proxyFor(server, "a", [], { kubeconfig: path });
      try {
        expect(
          (await get(proxy, "/apis/metrics.orch.io/v1beta1/namespaces/default/pods/web")).body.containers[0].usage.cpu,
        ).to.equal("11m");
      } finally {
        await proxy.close();
      }
    });
  });
});
