// The pure parts of the proxy's delegation to the virtual API server: request-header settings, request attributes,
// the SubjectAccessReview cache and the serving CA bundle. The end-to-end proof is
// test/e2e/metrics-aggregation.test.ts.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import {
  requestAttributes,
  SubjectAccessReviewer,
  forbiddenMessage,
  type ReviewSender,
} from "../../src/metrics-proxy/authorizer.js";
import { requestHeaderConfig } from "../../src/metrics-proxy/front-proxy.js";
import { caBundleOf } from "../../src/metrics-proxy/serving-cert.js";
import { makeCerts } from "./certs.js";

describe("metrics proxy: delegation to the virtual API server", () => {
  it(
    "reads the front proxy's settings from extension-apiserver-authentication, refusing a ConfigMap " +
      "without its CA",
    () => {
      const ca = readFileSync(makeCerts().caCert, "utf8");
      const config = requestHeaderConfig({
        "requestheader-client-ca-file": ca,
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
      });
      expect(config).to.deep.equal({
        clientCA: ca,
        allowedNames: ["front-proxy-client"],
        usernameHeaders: ["X-Remote-User"],
        groupHeaders: ["X-Remote-Group"],
        extraHeaderPrefixes: ["X-Remote-Extra-"],
      });
      expect(() => requestHeaderConfig({ "client-ca-file": ca })).to.throw(/requestheader-client-ca-file/);
      expect(() => requestHeaderConfig(undefined)).to.throw(/requestheader-client-ca-file/);
      expect(() =>
        requestHeaderConfig({
          "requestheader-client-ca-file": ca,
          "requestheader-allowed-names": "front-proxy-client",
        }),
      ).to.throw(/not a JSON list/);
    },
  );

  it("maps request paths to SubjectAccessReview attributes", () => {
    expect(requestAttributes("/apis/metrics.orch.io/v1beta1/namespaces/default/pods", "metrics.orch.io")).to.deep.equal(
      {
        kind: "resource",
        verb: "list",
        group: "metrics.orch.io",
        version: "v1beta1",
        resource: "pods",
        namespace: "default",
      },
    );
    expect(requestAttributes("/apis/metrics.orch.io/v1beta1/nodes/n1", "metrics.orch.io")).to.deep.equal({
      kind: "resource",
      verb: "get",
      group: "metrics.orch.io",
      version: "v1beta1",
      resource: "nodes",
      name: "n1",
    });
    expect(requestAttributes("/api/v1/namespaces/a/pods/p", "metrics.orch.io")).to.deep.equal({
      kind: "resource",
      verb: "get",
      group: "",
      version: "v1",
      resource: "pods",
      namespace: "a",
      name: "p",
    });
    expect(requestAttributes("/apis/metrics.orch.io/v1beta1", "metrics.orch.io")).to.deep.equal({
      kind: "nonResource",
      verb: "get",
      path: "/apis/metrics.orch.io/v1beta1",
    });
    expect(requestAttributes("/apis/other.io/v1/namespaces/a/pods", "metrics.orch.io").kind).to.equal("nonResource");
    const denied = forbiddenMessage(
      "bob",
      requestAttributes("/apis/metrics.orch.io/v1beta1/pods", "metrics.orch.io"),
      "",
    );
    expect(denied).to.equal(
      'pods.metrics.orch.io is forbidden: User "bob" cannot list resource "pods" in API group "metrics.orch.io" at the cluster scope',
    );
  });

  it(
    "caches decisions (allowed and denied) for the TTL, shares one review between concurrent requests, never " +
      "caches a failure",
    async () => {
      let now = 0;
      const sent: unknown[] = [];
      let answer: "allow" | "deny" | "fail" = "allow";
      const send: ReviewSender = async (review) => {
        sent.push(review);
        await new Promise((r) => setTimeout(r, 5));
        if (answer === "fail") throw new Error("connection refused");
        return answer === "allow" ? { allowed: true } : { allowed: false, reason: "no RBAC" };
      };
      const reviewer = new SubjectAccessReviewer(send, { ttlMs: 1000, now: () => now });
      const user = { name: "alice", groups: ["team"], extra: {} };
      const attrs = requestAttributes("/apis/metrics.orch.io/v1beta1/namespaces/a/pods", "metrics.orch.io");
      const both = await Promise.all([reviewer.authorize(user, attrs), reviewer.authorize(user, attrs)]);
      expect(both.map((d) => d.allowed)).to.deep.equal([true, true]);
      expect(sent).to.have.length(1);
      expect((sent[0] as any).spec).to.deep.equal({
        user: "alice",
        groups: ["team"],
        resourceAttributes: {
          verb: "list",
          group: "metrics.orch.io",
          version: "v1beta1",
          resource: "pods",
          namespace: "a",
        },
      });
      answer = "deny";
      now = 999;
      expect((await reviewer.authorize(user, attrs)).allowed, "still cached").to.equal(true);
      now = 1001;
      expect(await reviewer.authorize(user, attrs)).to.deep.equal({ allowed: false, reason: "no RBAC" });
      expect(sent).to.have.length(2);
      answer = "fail";
      now = 3000;
      const failed = await reviewer.authorize(user, attrs);
      expect(failed.allowed).to.equal(false);
      expect(failed.reason).to.match(/authorization failed: connection refused/);
      answer = "allow";
      expect((await reviewer.authorize(user, attrs)).allowed, "a failure is not cached").to.equal(true);
      expect((await reviewer.authorize({ ...user, groups: ["other"] }, attrs)).allowed).to.equal(true);
      expect(sent).to.have.length(5);
    },
  );

  it("the caBundle is the CA file when given, else the root end of the serving chain", () => {
    const certs = makeCerts();
    const server = readFileSync(certs.serverCert, "utf8");
    const ca = readFileSync(certs.caCert, "utf8");
    expect(caBundleOf(server, ca).toString()).to.equal(`${ca.trim()}\n`);
    expect(caBundleOf(`${server}${ca}`).toString()).to.equal(`${ca.trim()}\n`);
    expect(caBundleOf(server).toString()).to.equal(`${server.trim()}\n`);
    expect(() => caBundleOf("not a certificate")).to.throw(/no PEM certificate/);
    expect(() => caBundleOf(server, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----")).to.throw();
  });
});
