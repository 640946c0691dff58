import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "../../src/host/client.js";
import {
  askServer,
  kubeconfigIdentity,
  localIdentity,
  recordedName,
  serviceAccountSubject,
  whoAmI,
} from "../../src/host/identity.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

const FULL = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }];
const jwt = (claims: object) =>
  ['{"alg":"RS256"}', JSON.stringify(claims), "signature"]
    .map((p, i) => (i < 2 ? Buffer.from(p).toString("base64url") : p))
    .join(".");

function kubeconfig(user: Record<string, unknown>, name = "me"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:1" }],
    users: [{ name, ...user }],
    contexts: [{ name: "x", cluster: "c", user: name }],
    currentContext: "x",
  });
  return kc;
}

describe("who vc acts as on a host", () => {
  let server: KubeServer | undefined;
  let tmp: string;
  beforeEach(() => (tmp = mkdtempSync(join(tmpdir(), "vc-identity-"))));
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(tmp, { recursive: true, force: true });
  });

  it("asks the server (SelfSubjectReview) where its discovery lists one", async () => {
    server = await startKubeServer({ users: [{ token: "t-alice", rules: FULL, name: "alice" }], profile: "current" });
    const client = KubeClient.open({ kubeconfig: server.writeKubeconfig({ token: "t-alice" }), context: "test" });
    try {
      expect(await whoAmI(client)).to.deep.equal({ name: "alice", from: "SelfSubjectReview", verified: true });
      expect(server.countRequests({ method: "POST", resource: "selfsubjectreviews" })).to.equal(1);
    } finally {
      client.close();
    }
  });

  it(
    "where the server serves no SelfSubjectReview (before 1.27) and reviews no tokens, keeps the kubeconfig's " +
      "name as unverified, without sending a SelfSubjectReview",
    async () => {
      server = await startKubeServer({
        users: [{ token: "t-alice", rules: FULL, name: "alice" }],
        unservedGroups: ["authentication.k8s.io"],
      });
      const client = KubeClient.open({ kubeconfig: server.writeKubeconfig({ token: "t-alice" }), context: "test" });
      try {
        // A static token carries no name: the user entry's name is what there is, and the server did not confirm it.
        const id = await whoAmI(client);
        expect(id).to.deep.equal({ name: "user-t-alice", from: "kubeconfig user", verified: false });
        expect(recordedName(id)).to.equal("unverified: user-t-alice");
        expect(server.countRequests({ method: "POST", resource: "selfsubjectreviews" })).to.equal(0);
        // One SelfSubjectAccessReview (authenticated? may it review tokens?: yes), then a TokenReview this server does
        // not serve (404).
        expect(server.countRequests({ method: "POST", resource: "selfsubjectaccessreviews" })).to.equal(1);
        expect(server.countRequests({ method: "POST", path: "/apis/authentication.k8s.io/v1/tokenreviews" })).to.equal(
          1,
        );
      } finally {
        client.close();
      }
    },
  );

  it(
    "a kubeconfig user entry calling itself reconciler is recorded as unverified, never as the " + "reconciler",
    async () => {
      server = await startKubeServer({
        users: [{ token: "t-mallory", rules: FULL, name: "mallory" }],
        unservedGroups: ["authentication.k8s.io"],
      });
      const path = join(tmp, "config");
      writeFileSync(
        path,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "c", cluster: { server: server.url, "insecure-skip-tls-verify": true } }],
          users: [{ name: "reconciler", user: { token: "t-mallory" } }],
          contexts: [{ name: "x", context: { cluster: "c", user: "reconciler" } }],
          "current-context": "x",
        }),
      );
      const client = KubeClient.open({ kubeconfig: path });
      try {
        const id = await whoAmI(client);
        expect(id.verified).to.equal(false);
        expect(recordedName(id)).to.equal("unverified: reconciler");
      } finally {
        client.close();
      }
    },
  );

  it("an answer the server refuses (anonymous) or cannot give leaves the claim unverified", async () => {
    server = await startKubeServer({
      users: [{ token: "t-alice", rules: FULL, name: "alice" }],
      unservedGroups: ["authentication.k8s.io"],
    });
    const client = KubeClient.open({ kubeconfig: server.writeKubeconfig({ token: "t-alice" }), context: "test" });
    server.faults.add({ method: "POST", path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", status: 403 });
    try {
      const answer = await askServer(client);
      expect(answer).to.deep.include({ via: "SelfSubjectAccessReview", refused: true });
      expect(answer.identity.verified).to.equal(false);
    } finally {
      client.close();
    }
  });

  it("reads a client certificate's CN, from inline data or a file", () => {
    const key = join(tmp, "k.pem");
    const crt = join(tmp, "c.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        crt,
        "-days",
        "1",
        "-subj",
        "/O=devs/CN=carol",
      ],
      { stdio: "pipe" },
    );
    expect(
      kubeconfigIdentity(
        kubeconfig({ certData: readFileSync(crt).toString("base64"), keyData: readFileSync(key).toString("base64") }),
      ),
    ).to.deep.equal({ name: "carol", from: "client certificate", verified: false });
    expect(kubeconfigIdentity(kubeconfig({ certFile: crt, keyFile: key }))).to.deep.equal({
      name: "carol",
      from: "client certificate",
      verified: false,
    });
  });

  it(
    "reads a ServiceAccount token's subject (inline, or the in-cluster token file), and nothing from " + "other tokens",
    () => {
      const sa = jwt({ iss: "https://kubernetes.default.svc", sub: "system:serviceaccount:ci:deployer" });
      expect(kubeconfigIdentity(kubeconfig({ token: sa }))).to.deep.equal({
        name: "system:serviceaccount:ci:deployer",
        from: "token subject",
        verified: false,
      });
      const file = join(tmp, "token");
      writeFileSync(file, `${sa}\n`);
      expect(
        kubeconfigIdentity(
          kubeconfig({ authProvider: { name: "tokenFile", config: { tokenFile: file } } }, "inClusterUser"),
        ),
      ).to.deep.equal({ name: "system:serviceaccount:ci:deployer", from: "token subject", verified: false });
      // An OIDC token's subject is no Kubernetes user name, and a static token has none.
      expect(kubeconfigIdentity(kubeconfig({ token: jwt({ sub: "248289761001" }) }, "dana"))).to.deep.equal({
        name: "dana",
        from: "kubeconfig user",
        verified: false,
      });
      expect(kubeconfigIdentity(kubeconfig({ token: "0123abcd" }, "erin"))).to.deep.equal({
        name: "erin",
        from: "kubeconfig user",
        verified: false,
      });
      expect(serviceAccountSubject("not.a.jwt")).to.equal(undefined);
    },
  );

  it("names the impersonated user (as:) first: the server acts as that user", () => {
    expect(kubeconfigIdentity(kubeconfig({ token: "x", impersonateUser: "frank" }))).to.deep.equal({
      name: "frank",
      from: "impersonation",
      verified: false,
    });
  });

  it("names the local account for a target without a server", () => {
    expect(localIdentity()).to.deep.equal({ name: userInfo().username, from: "local user", verified: false });
  });
});
