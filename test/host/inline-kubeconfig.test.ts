// host/inline-kubeconfig.ts: a kubeconfig from a host Secret passes only with inline credentials; every field that runs
// a program or reads a file is refused by name.
import { expect } from "chai";
import { safeEntries, UnsafeKubeconfigError } from "../../src/host/inline-kubeconfig.js";
import type { KubeconfigDoc } from "../../src/host/kubeconfig-file.js";

function doc(
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = { server: "https://10.0.0.1:443", "certificate-authority-data": "Q0E=" },
): KubeconfigDoc {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u", namespace: "default" } }],
    "current-context": "x",
  } as KubeconfigDoc;
}

const refused = (d: KubeconfigDoc): string => {
  try {
    safeEntries(d, "secret vc-evil/vc-evil");
  } catch (err) {
    expect(err).to.be.instanceOf(UnsafeKubeconfigError);
    return (err as Error).message;
  }
  throw new Error("accepted");
};

describe("kube: inline-kubeconfig (what a kubeconfig from a host Secret may hold)", () => {
  it("accepts a token user and an inline certificate user, and returns copies of the entries", () => {
    const tokenUser = safeEntries(doc({ token: "t" }), "s");
    expect(tokenUser.user).to.deep.equal({ token: "t" });
    expect(tokenUser.namespace).to.equal("default");
    const certUser = safeEntries(
      doc(
        { "client-certificate-data": "Y2VydA==", "client-key-data": "a2V5" },
        { server: "https://h", "insecure-skip-tls-verify": true },
      ),
      "s",
    );
    expect(certUser.cluster).to.deep.equal({ server: "https://h", "insecure-skip-tls-verify": true });
  });

  const cases: Array<[string, Record<string, unknown>, Record<string, unknown> | undefined, string]> = [
    [
      "an exec plugin",
      { exec: { apiVersion: "client.authentication.k8s.io/v1beta1", command: "sh", args: ["-c", "touch /tmp/pwned"] } },
      undefined,
      "user.exec (runs a program)",
    ],
    [
      "an auth provider",
      { "auth-provider": { name: "gcp", config: { "cmd-path": "/bin/sh" } } },
      undefined,
      "user.auth-provider (runs an authentication plugin)",
    ],
    [
      "a client certificate file",
      { "client-certificate": "/etc/passwd", "client-key-data": "a2V5" },
      undefined,
      "user.client-certificate (reads a local file)",
    ],
    [
      "a client key file",
      { "client-certificate-data": "Y2VydA==", "client-key": "/root/.ssh/id_rsa" },
      undefined,
      "user.client-key (reads a local file)",
    ],
    [
      "a token file",
      { tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" },
      undefined,
      "user.tokenFile (reads a local file)",
    ],
    [
      "a certificate authority file",
      { token: "t" },
      { server: "https://h", "certificate-authority": "/etc/shadow" },
      "cluster.certificate-authority (reads a local file)",
    ],
    [
      "basic auth and impersonation",
      { token: "t", username: "u", password: "p", as: "system:admin" },
      undefined,
      "user.as, user.password, user.username",
    ],
    ["a token that is not a string", { token: { file: "/x" } }, undefined, "token (not a string)"],
    ["a field with a control character in its name", { token: "t", "x\u001b[31m": 1 }, undefined, "user.x\\x1b[31m"],
  ];
  for (const [what, user, cluster, named] of cases) {
    it(`refuses ${what}, naming the field and the Secret`, () => {
      const message = refused(doc(user, cluster));
      expect(message).to.contain(named).and.contain("secret vc-evil/vc-evil").and.contain("nothing was run");
      expect(message).to.not.contain("\u001b");
    });
  }

  it("refuses a user without credentials and a server that is not http(s)", () => {
    expect(refused(doc({}))).to.contain("neither a token nor an inline client certificate");
    expect(refused(doc({ "client-certificate-data": "Y2VydA==" }))).to.contain(
      "neither a token nor an inline client certificate",
    );
    expect(refused(doc({ token: "t" }, { server: "file:///etc/passwd" }))).to.contain(
      "without an http(s) server address",
    );
  });

  it("checks the entries the current context names, not the first ones", () => {
    const d = doc({ token: "t" });
    d.users!.push({ name: "evil", user: { exec: { command: "sh" } } });
    d.contexts!.push({ name: "y", context: { cluster: "c", user: "evil" } });
    expect(() => safeEntries(d, "s")).to.not.throw();
    d["current-context"] = "y";
    expect(refused(d)).to.contain("user.exec");
  });
});
