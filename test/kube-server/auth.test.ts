// Bearer-token users and rules: 401 for unknown tokens, 403 worded like upstream, namespaces in rules; kubectl over
// TLS.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { kubectl } from "../support/kubectl.js";
import { call, configMap } from "./helpers.js";

describe("kube-server: authentication and authorisation", function () {
  this.timeout(30_000);
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer({
      users: [
        {
          token: "reader",
          name: "alice",
          rules: [
            {
              verbs: ["get", "list", "watch"],
              apiGroups: [""],
              resources: ["configmaps", "pods/log"],
              namespaces: ["default"],
            },
          ],
        },
      ],
    });
    server.put(configMap("a"));
  });
  after(async () => server.close());

  it("answers 401 for an unknown token", async () => {
    const r = await call(server, "GET", "/api/v1/namespaces/default/configmaps", undefined, { token: "nobody" });
    expect(r.status).to.equal(401);
    expect(r.body).to.deep.include({ kind: "Status", reason: "Unauthorized", code: 401 });
  });

  it("allows what a rule allows and forbids the rest with upstream's message", async () => {
    expect(
      (await call(server, "GET", "/api/v1/namespaces/default/configmaps/a", undefined, { token: "reader" })).status,
    ).to.equal(200);
    const write = await call(server, "POST", "/api/v1/namespaces/default/configmaps", configMap("b"), {
      token: "reader",
    });
    expect(write.status).to.equal(403);
    expect(write.body.message).to.equal(
      'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"',
    );
    const otherNs = await call(server, "GET", "/api/v1/namespaces/kube-system/configmaps/x", undefined, {
      token: "reader",
    });
    expect(otherNs.body.message).to.equal(
      'configmaps "x" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "kube-system"',
    );
    const cluster = await call(server, "GET", "/api/v1/nodes", undefined, { token: "reader" });
    expect(cluster.body.message).to.equal(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    const metrics = await call(server, "GET", "/apis/metrics.orch.io/v1beta1/namespaces/default/pods", undefined, {
      token: "reader",
    });
    expect(metrics.status).to.equal(403);
    expect(metrics.body.details).to.deep.include({ group: "metrics.orch.io", kind: "pods" });
    expect((await call(server, "GET", "/apis", undefined, { token: "reader" })).status).to.equal(200);
  });

  it("adds users at run time", async () => {
    server.addUser("metrics", [{ verbs: ["list"], apiGroups: ["metrics.orch.io"], resources: ["pods"] }]);
    expect(
      (await call(server, "GET", "/apis/metrics.orch.io/v1beta1/pods", undefined, { token: "metrics" })).status,
    ).to.equal(200);
    expect((await call(server, "GET", "/api/v1/pods", undefined, { token: "metrics" })).status).to.equal(403);
  });

  it("treats requests without credentials as admin unless anonymous: reject", async () => {
    expect((await call(server, "GET", "/api/v1/namespaces", undefined, { token: null })).status).to.equal(200);
    const strict = await startKubeServer({ anonymous: "reject" });
    try {
      expect((await call(strict, "GET", "/api/v1/namespaces", undefined, { token: null })).status).to.equal(401);
    } finally {
      await strict.close();
    }
  });

  it("over TLS, kubectl sends the token: a restricted user sees upstream's Forbidden error", async () => {
    const tls = await startKubeServer({
      tls: true,
      profile: "current",
      users: [
        {
          token: "reader",
          name: "alice",
          rules: [{ verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"], namespaces: ["default"] }],
        },
      ],
    });
    try {
      expect(tls.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      const kc = tls.writeKubeconfig({ token: "reader" });
      const ok = await kubectl(tls, ["get", "configmaps", "-n", "default", "-o", "name"], { kubeconfig: kc });
      expect(ok.code, ok.stderr).to.equal(0);
      const denied = await kubectl(tls, ["get", "secrets", "-n", "default"], { kubeconfig: kc });
      expect(denied.code).to.equal(1);
      expect(denied.stderr).to.include(
        'Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"',
      );
      const canGet = await kubectl(tls, ["auth", "can-i", "get", "configmaps", "-n", "default"], { kubeconfig: kc });
      expect(canGet.stdout, canGet.stderr).to.equal("yes\n");
      const canDelete = await kubectl(tls, ["auth", "can-i", "delete", "configmaps", "-n", "default"], {
        kubeconfig: kc,
      });
      expect(canDelete.code).to.equal(1);
      expect(canDelete.stdout).to.equal("no\n");
      const whoami = await kubectl(tls, ["auth", "whoami", "-o", "json"], { kubeconfig: kc });
      expect(JSON.parse(whoami.stdout).status.userInfo, whoami.stderr).to.deep.equal({
        username: "alice",
        groups: ["system:authenticated"],
      });
      const admin = await kubectl(tls, ["get", "secrets", "-n", "default"]);
      expect(admin.code, admin.stderr).to.equal(0);
      expect(tls.requests.filter((r) => r.resource === "secrets").map((r) => `${r.user} ${r.status}`)).to.deep.equal([
        "alice 403",
        "admin 200",
      ]);
      expect(tls.countRequests({ user: "alice", resource: "secrets" })).to.equal(1);
      expect(tls.requests.find((r) => r.resource === "secrets")!.userAgent).to.match(/^kubectl\//);
    } finally {
      await tls.close();
    }
  });
});
