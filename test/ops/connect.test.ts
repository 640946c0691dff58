// vc connect / disconnect against two test API servers (host and virtual cluster), proven with the real kubectl.
import { expect } from "chai";
import { copyFileSync, existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dump, load } from "js-yaml";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { b64, clientCert, kubectl, tempDir, vc, vcProcess } from "./helpers.js";

type KubeconfigShape = Record<"contexts" | "clusters" | "users", Array<{ name: string }>> & {
  "current-context"?: string;
};

function virtualKubeconfig(server: string, cert?: { cert: string; key: string }): string {
  const user: Record<string, string> = { token: "vtoken" };
  if (cert) Object.assign(user, { "client-certificate-data": b64(cert.cert), "client-key-data": b64(cert.key) });
  return dump({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "vcluster", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "vcluster-admin", user }],
    contexts: [{ name: "vcluster", context: { cluster: "vcluster", user: "vcluster-admin", namespace: "default" } }],
    "current-context": "vcluster",
  });
}

describe("ops: vc connect / disconnect", function () {
  this.timeout(60_000);
  let host: KubeServer;
  let virtual: KubeServer;
  let dir: string;
  let userConfig: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    host = await startKubeServer();
    virtual = await startKubeServer({
      profile: "current",
      users: [{ token: "vtoken", rules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], name: "vc-admin" }],
    });
    virtual.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "inside-the-virtual-cluster" } });
    host.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-team-a" } });
    host.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenants" } });
    host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vc-team-a", namespace: "vc-team-a" },
      data: { config: b64(virtualKubeconfig(virtual.url, clientCert(3))) },
    });
    host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vc-team-b", namespace: "tenants" },
      data: { config: b64(virtualKubeconfig(virtual.url, clientCert(365))) },
    });
    host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vc-empty", namespace: "vc-team-a" },
      data: { other: b64("x") },
    });
  });
  after(async () => {
    await host?.close();
    await virtual?.close();
  });
  beforeEach(() => {
    dir = tempDir();
    userConfig = join(dir, "config");
    copyFileSync(host.kubeconfigPath, userConfig);
    // KUBECONFIG with two files: vc edits the first, as kubectl does.
    const second = join(dir, "second");
    writeFileSync(second, dump({ apiVersion: "v1", kind: "Config", clusters: [], users: [], contexts: [] }));
    env = { KUBECONFIG: `${userConfig}:${second}`, HOME: dir };
  });

  it(
    "adds a context, switches to it (kubectl sees it and reaches the virtual cluster), and disconnect " + "returns",
    async () => {
      const before = await kubectl(["config", "current-context"], env);
      expect(before.stdout.trim()).to.equal("test");

      const r = await vcProcess(["connect", "team-a", "--debug"], { env });
      expect(r.stderr).to.contain("debug: reading secret vc-team-a/vc-team-a");
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.contain(`connected to virtual cluster team-a (namespace vc-team-a) at ${virtual.url}`);
      expect(r.stderr).to.match(
        /warning: the client certificate \(CN=admin, O=system:masters\) expires at .*, in 2 day\(s\)/,
      );

      const ctx = (await kubectl(["config", "current-context"], env)).stdout.trim();
      expect(ctx).to.equal("vc_team-a_vc-team-a_test");
      const ns = await kubectl(["get", "namespaces", "-o", "name"], env);
      expect(ns.stderr).to.equal("");
      expect(ns.stdout).to.contain("namespace/inside-the-virtual-cluster");
      expect(virtual.requests.some((q) => q.path === "/api/v1/namespaces")).to.equal(true);
      expect(statSync(userConfig).mode & 0o777).to.equal(0o600);

      const d = await vc(["disconnect"], { env });
      expect(d.code, d.stderr).to.equal(0);
      expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("test");
      const hostNs = await kubectl(["get", "namespaces", "-o", "name"], env);
      expect(hostNs.stdout).to.contain("namespace/vc-team-a");
      const doc = load(readFileSync(userConfig, "utf8")) as {
        contexts: Array<{ name: string }>;
        users: Array<{ name: string }>;
      };
      expect(doc.contexts.map((c) => c.name)).to.deep.equal(["test"]);
      expect(doc.users.map((u) => u.name)).to.deep.equal(["user-admin"]);
    },
  );

  it(
    "reads the namespace from --namespace, prints a valid certificate's expiry, and keeps the host as the way " +
      "back across two connects",
    async () => {
      const a = await vc(["connect", "team-a"], { env });
      expect(a.code, a.stderr).to.equal(0);
      const b = await vc(["connect", "team-b", "--namespace", "tenants", "--context-name", "team-b"], { env });
      expect(b.code, b.stderr).to.equal(0);
      expect(b.stdout).to.match(/client certificate \(CN=admin, O=system:masters\) valid until .* \(36[45] days\)/);
      expect(b.stdout).to.contain('vc disconnect returns to "test"');
      expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("team-b");
      expect((await vc(["disconnect", "--keep"], { env })).code).to.equal(0);
      expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("test");
      expect((await kubectl(["config", "get-contexts", "-o", "name"], env)).stdout.split("\n")).to.include("team-b");
    },
  );

  it(
    "disconnect removes every context, cluster and user vc connect added: two clusters, and a reconnect under " +
      "another name",
    async () => {
      const original = load(readFileSync(userConfig, "utf8")) as KubeconfigShape;
      expect((await vc(["connect", "team-a"], { env })).code).to.equal(0);
      expect((await vc(["connect", "team-b", "--namespace", "tenants"], { env })).code).to.equal(0);
      expect((await vc(["connect", "team-a", "--context-name", "team-a-again"], { env })).code).to.equal(0);
      const connected = load(readFileSync(userConfig, "utf8")) as KubeconfigShape;
      expect(connected.contexts.map((c) => c.name).sort()).to.deep.equal([
        "team-a-again",
        "test",
        "vc_team-a_vc-team-a_test",
        "vc_team-b_tenants_test",
      ]);
      const d = await vc(["disconnect"], { env });
      expect(d.code, d.stderr).to.equal(0);
      expect(d.stdout).to.equal(
        'switched from "team-a-again" to "test"; removed contexts "vc_team-a_vc-team-a_test", "vc_team-b_tenants_test", "team-a-again" (with their cluster and user entries)\n',
      );
      const after = load(readFileSync(userConfig, "utf8")) as KubeconfigShape;
      for (const section of ["contexts", "clusters", "users"] as const)
        expect(
          after[section].map((e) => e.name),
          section,
        ).to.deep.equal(original[section].map((e) => e.name));
      expect(after["current-context"]).to.equal("test");
    },
  );

  it("disconnect after switching back by hand keeps the current context and still removes vc's entries", async () => {
    expect((await vc(["connect", "team-a"], { env })).code).to.equal(0);
    expect((await kubectl(["config", "use-context", "test"], env)).code).to.equal(0);
    const d = await vc(["disconnect"], { env });
    expect(d.code, d.stderr).to.equal(0);
    expect(d.stdout).to.equal(
      'current context "test" was not made by vc connect: left as it is; removed context "vc_team-a_vc-team-a_test" (with their cluster and user entries)\n',
    );
    expect((await kubectl(["config", "get-contexts", "-o", "name"], env)).stdout.trim()).to.equal("test");
    const again = await vc(["disconnect"], { env });
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('the current context "test"').and.contain("nothing to disconnect");
  });

  it("checks that the virtual API server answers, and says who you are there (SelfSubjectReview)", async () => {
    virtual.resetRequests();
    const r = await vc(["connect", "team-a"], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('the virtual API server answers: you are "vc-admin" (SelfSubjectReview)');
    expect(
      virtual.countRequests({ method: "POST", path: "/apis/authentication.k8s.io/v1/selfsubjectreviews" }),
    ).to.equal(1);
  });

  it(
    "on a server without SelfSubjectReview (1.20), checks with a SelfSubjectAccessReview and shows the " +
      "kubeconfig's claim as unverified",
    async () => {
      const old = await startKubeServer({
        unservedGroups: ["authentication.k8s.io"],
        users: [{ token: "vtoken", rules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], name: "vc-admin" }],
      });
      try {
        host.put({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "vc-old", namespace: "vc-team-a" },
          data: { config: b64(virtualKubeconfig(old.url, clientCert(30, "vc-old-admin"))) },
        });
        const r = await vc(["connect", "old", "-n", "vc-team-a"], { env });
        expect(r.code, r.stderr).to.equal(0);
        // The kubeconfig sends a token and a certificate: which one the server went by cannot be told.
        expect(r.stdout).to.contain(
          "the virtual API server answers: authenticated (SelfSubjectAccessReview; this server has no " +
            "SelfSubjectReview and did not confirm who you are: unverified: vc-old-admin, client certificate)",
        );
        expect(
          old.countRequests({ method: "POST", path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" }),
        ).to.equal(1);
      } finally {
        await old.close();
      }
    },
  );

  it(
    "refuses when the virtual API server does not answer: exit 2, how to reach it, the kubeconfig untouched; " +
      "--no-check writes it anyway",
    async () => {
      host.put({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "vc-far", namespace: "vc-team-a" },
        data: { config: b64(virtualKubeconfig("https://far.vc-team-a.svc.cluster.invalid:443")) },
      });
      const before = readFileSync(userConfig, "utf8");
      const r = await vc(["connect", "far", "-n", "vc-team-a"], { env });
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal("");
      expect(r.stderr).to.match(
        /^error: the virtual API server https:\/\/far\.vc-team-a\.svc\.cluster\.invalid:443 does not answer \(.+\): your kubeconfig was not changed\./,
      );
      expect(r.stderr).to.contain("kubectl port-forward --context test -n vc-team-a svc/far 8443:443");
      expect(r.stderr).to.contain("vc connect far -n vc-team-a --server https://localhost:8443");
      expect(r.stderr).to.contain("--no-check");
      expect(r.stderr).not.to.contain("    at ");
      expect(readFileSync(userConfig, "utf8")).to.equal(before);

      const unchecked = await vc(["connect", "far", "-n", "vc-team-a", "--no-check"], { env });
      expect(unchecked.code, unchecked.stderr).to.equal(0);
      expect(unchecked.stderr).to.contain("warning: not checked whether the virtual API server answers (--no-check)");
      expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("vc_far_vc-team-a_test");
    },
  );

  it("refuses when the virtual API server refuses the credentials (401), kubeconfig untouched", async () => {
    const bad = virtualKubeconfig(virtual.url).replace("token: vtoken", "token: not-a-known-token");
    host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vc-stale", namespace: "vc-team-a" },
      data: { config: b64(bad) },
    });
    const before = readFileSync(userConfig, "utf8");
    const r = await vc(["connect", "stale", "-n", "vc-team-a"], { env });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /^error: the virtual API server http:\/\/127\.0\.0\.1:\d+ refused the credentials of secret vc-team-a\/vc-stale \(401 Unauthorized\): your kubeconfig was not changed\./,
    );
    expect(readFileSync(userConfig, "utf8")).to.equal(before);
  });

  it("--print writes the kubeconfig to stdout and changes nothing; --server replaces the address", async () => {
    const before = readFileSync(userConfig, "utf8");
    const r = await vc(["connect", "team-a", "--print", "--server", virtual.url.replace("127.0.0.1", "localhost")], {
      env,
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(readFileSync(userConfig, "utf8")).to.equal(before);
    const printed = join(dir, "printed");
    writeFileSync(printed, r.stdout);
    const k = await kubectl(["--kubeconfig", printed, "get", "namespaces", "-o", "name"]);
    expect(k.stdout).to.contain("namespace/inside-the-virtual-cluster");
    expect(r.stdout).to.contain("server: http://localhost:");
    expect(r.stderr).to.match(/^warning: the client certificate \(CN=admin, O=system:masters\) expires at /);
  });

  it("connects even when the certificate cannot be read, saying so with --debug", async () => {
    const broken = virtualKubeconfig(virtual.url).replace(
      "token: vtoken",
      "token: vtoken\n      client-certificate-data: bm90IGEgY2VydA==",
    );
    host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vc-team-c", namespace: "vc-team-a" },
      data: { config: b64(broken) },
    });
    const r = await vc(["connect", "team-c", "-n", "vc-team-a", "--debug"], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain("debug: cannot read the client certificate to show its expiry");
    expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("vc_team-c_vc-team-a_test");
  });

  it("keeps a symlinked kubeconfig a symlink", async () => {
    const real = join(dir, "real-config");
    copyFileSync(userConfig, real);
    const link = join(dir, "link-config");
    symlinkSync(real, link);
    const r = await vc(["connect", "team-a"], { env: { ...env, KUBECONFIG: link } });
    expect(r.code, r.stderr).to.equal(0);
    expect(lstatSync(link).isSymbolicLink()).to.equal(true);
    expect(readFileSync(real, "utf8")).to.contain("current-context: vc_team-a_vc-team-a_test");
  });

  it("fails clearly when the secret or its key is missing, and disconnect without connect", async () => {
    const unknown = await vc(["connect", "nope"], { env });
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(
      /^error: unknown cluster "nope": no folder clusters\/nope in .* and no host namespace vc-nope on context "test"/,
    );
    // Its namespace exists, the control plane has not written its kubeconfig Secret.
    const missing = await vc(["connect", "nope", "-n", "vc-team-a"], { env });
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain(
      'error: secret vc-nope not found in namespace vc-team-a: is the virtual cluster "nope" running there?',
    );
    expect(missing.stderr).not.to.contain("    at ");
    const noKey = await vc(["connect", "empty", "-n", "vc-team-a"], { env });
    expect(noKey.stderr).to.contain('has no key "config"');
    const d = await vc(["disconnect"], { env });
    expect(d.code).to.equal(1);
    expect(d.stderr).to.contain('the current context "test"');
    expect((await kubectl(["config", "current-context"], env)).stdout.trim()).to.equal("test");
  });

  it(
    "never runs an exec plugin or reads a file a host Secret names: refused before any client exists, kubeconfig " +
      "unchanged",
    async () => {
      const marker = join(dir, "ran");
      const evil = load(virtualKubeconfig(virtual.url)) as { users: Array<{ user: Record<string, unknown> }> };
      evil.users[0]!.user = {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1beta1",
          command: "sh",
          args: [
            "-c",
            `touch ${marker}; echo ` +
              `'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"vtoken"}}'`,
          ],
        },
      };
      host.put({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "vc-evil", namespace: "vc-team-a" },
        data: { config: b64(dump(evil)) },
      });
      const before = readFileSync(userConfig, "utf8");
      const asked = virtual.requests.length;
      for (const extra of [[], ["--no-check"], ["--print"]]) {
        const r = await vc(["connect", "evil", "-n", "vc-team-a", ...extra], { env });
        expect(r.code, r.stdout + r.stderr).to.equal(2);
        expect(r.stderr)
          .to.contain("secret vc-team-a/vc-evil holds a kubeconfig vc will not use: user.exec (runs a program)")
          .and.contain("your kubeconfig was not changed");
        expect(r.stdout).to.not.contain("exec");
        expect(existsSync(marker), `ran with ${extra.join(" ")}`).to.equal(false);
        expect(readFileSync(userConfig, "utf8")).to.equal(before);
      }
      // Refused before any client was built: the virtual API server was never asked.
      expect(virtual.requests.length).to.equal(asked);
    },
  );

  it("refuses to read the secret without permission (403 from the host) and names it", async () => {
    host.addUser("viewer", [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }]);
    const limited = host.writeKubeconfig({ token: "viewer", context: "viewer", path: join(dir, "viewer") });
    const r = await vc(["connect", "team-a", "--kubeconfig", limited], { env });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/error: GET \/api\/v1\/namespaces\/vc-team-a\/secrets\/vc-team-a: 403/);
  });
});
