// The metrics proxy mounts host Secret vc-<cluster> as its virtual kubeconfig: an exec plugin or a file reference in it
// (the proxy's own ServiceAccount token, sent to a server the Secret names) is refused before anything runs or is read.
import { expect } from "chai";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump } from "js-yaml";
import { startProxy } from "../../src/metrics-proxy/proxy.js";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { makeCerts } from "./certs.js";
import { UserError } from "../../src/model/errors.js";

const kubeconfig = (user: Record<string, unknown>) =>
  dump({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });

describe("metrics proxy: the virtual kubeconfig from a tenant-writable Secret", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "vc-proxy-vk-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const start = async (virtualUser: Record<string, unknown>): Promise<Error> => {
    writeFileSync(join(dir, "host"), kubeconfig({ token: "host-token" }));
    writeFileSync(join(dir, "virtual"), kubeconfig(virtualUser));
    const certs = makeCerts();
    const config = parseFlags([
      ...["--cluster", "a", "--host-namespace", "vc-a", "--kubeconfig", join(dir, "host")],
      ...["--virtual-kubeconfig", join(dir, "virtual"), "--apiservice", "", "--listen", "127.0.0.1:0"],
      ...["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey],
    ]);
    try {
      const proxy = await startProxy(config);
      await (proxy as unknown as { close(): Promise<void> }).close?.();
    } catch (err) {
      return err as Error;
    }
    throw new Error("the proxy started");
  };

  it(
    "refuses an exec plugin without running it, and a token file (its own ServiceAccount token) without " +
      "reading it",
    async () => {
      const marker = join(dir, "ran");
      const exec = await start({
        exec: { apiVersion: "client.authentication.k8s.io/v1beta1", command: "sh", args: ["-c", `touch ${marker}`] },
      });
      expect(exec).to.be.instanceOf(UserError);
      expect(exec.message).to.contain("user.exec (runs a program)");
      expect(existsSync(marker)).to.equal(false);
      const file = await start({ tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" });
      expect(file.message).to.contain("user.tokenFile (reads a local file)");
    },
  );
});
