import { createHash } from "node:crypto";
import { expect } from "chai";
import fc from "fast-check";
import {
  MAX_NAME_LENGTH,
  hostClusterScopedName,
  hostName,
  classifyHost,
  parseServiceHost,
  safeConcatName,
  translateServiceHost,
} from "../../src/translate/names.js";

const sha10 = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 10);

describe("translate/names", () => {
  describe("hostName", () => {
    it("joins name, virtual namespace and cluster with -x-", () => {
      expect(hostName("reviews", "shop", "team-a")).to.equal("reviews-x-shop-x-team-a");
    });

    it("keeps a name of exactly 63 characters as it is", () => {
      const name = "n".repeat(53); // 53 + "-x-ns-x-c1" (10) = 63
      const out = hostName(name, "ns", "c1");
      expect(out).to.have.length(63);
      expect(out).to.equal(`${name}-x-ns-x-c1`);
    });

    it("hashes a name of 64 characters: first 52, '-', 10 hex of SHA-256 of the full name", () => {
      const name = "n".repeat(54);
      const full = `${name}-x-ns-x-c1`;
      expect(full).to.have.length(64);
      const out = hostName(name, "ns", "c1");
      expect(out).to.equal(`${full.slice(0, 52)}-${sha10(full)}`);
      expect(out).to.have.length(MAX_NAME_LENGTH);
    });

    it("matches a fixed value of the existing syncers' rule (regression)", () => {
      // printf '%s' checkout-frontend-canary-release-2024-x-payments-prod-x-team-alpha-west | sha256sum
      expect(hostName("checkout-frontend-canary-release-2024", "payments-prod", "team-alpha-west")).to.equal(
        "checkout-frontend-canary-release-2024-x-payments-pro-04eae14c27",
      );
    });

    it("turns a '.-' left by the cut into '-'", () => {
      const name = `${"a".repeat(51)}.b${"c".repeat(5)}`; // the cut ends right after the dot
      const full = `${name}-x-ns-x-c1`;
      const out = hostName(name, "ns", "c1");
      expect(full.slice(0, 52).endsWith(".")).to.equal(true);
      expect(out).to.not.include(".-");
      expect(out).to.equal(`${"a".repeat(51)}-${sha10(full)}`);
      expect(out).to.have.length(62);
    });

    it("keeps a dot that the cut does not leave next to the '-'", () => {
      const name = `${"a".repeat(50)}.bb${"c".repeat(5)}`;
      expect(hostName(name, "ns", "c1").slice(0, 52)).to.equal(`${"a".repeat(50)}.b`);
    });

    it("gives different names to long names that share their first 52 characters", () => {
      const prefix = "p".repeat(60);
      const a = hostName(`${prefix}-one`, "ns", "c1");
      const b = hostName(`${prefix}-two`, "ns", "c1");
      expect(a.slice(0, 52)).to.equal(b.slice(0, 52));
      expect(a).to.not.equal(b);
    });

    it("separates the same virtual name in different namespaces and clusters", () => {
      const names = new Set([hostName("web", "a", "c1"), hostName("web", "b", "c1"), hostName("web", "a", "c2")]);
      expect(names.size).to.equal(3);
    });

    it("collides when a name or namespace contains '-x-' (render reports such collisions)", () => {
      expect(hostName("a-x-b", "c", "d")).to.equal(hostName("a", "b-x-c", "d"));
    });
  });

  it("always gives a DNS-1123 label of at most 63 characters for label inputs (property)", () => {
    const lbl = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    fc.assert(
      fc.property(lbl, lbl, lbl, (name, ns, cluster) => {
        const out = hostName(name, ns, cluster);
        expect(out.length).to.be.at.most(MAX_NAME_LENGTH);
        expect(out).to.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        expect(hostName(name, ns, cluster)).to.equal(out);
        if (`${name}-x-${ns}-x-${cluster}`.length <= MAX_NAME_LENGTH)
          expect(out).to.equal(`${name}-x-${ns}-x-${cluster}`);
      }),
      { numRuns: 500 },
    );
  });

  describe("safeConcatName and hostClusterScopedName", () => {
    it("joins with '-' and hashes past 63 characters", () => {
      expect(safeConcatName("vc-config", "team-a")).to.equal("vc-config-team-a");
      const long = "z".repeat(70);
      expect(safeConcatName("vc", long)).to.equal(`${`vc-${long}`.slice(0, 52)}-${sha10(`vc-${long}`)}`);
    });
    it("names a cluster-scoped object <name>-x-<cluster>", () => {
      expect(hostClusterScopedName("node-1", "team-a")).to.equal("node-1-x-team-a");
    });
  });

  describe("translateServiceHost", () => {
    const t = (h: string) => translateServiceHost(h, "shop", "team-a", "vc-team-a");
    const fqdn = "reviews-x-shop-x-team-a.vc-team-a.svc.cluster.local";

    it("translates svc, svc.ns, svc.ns.svc and svc.ns.svc.cluster.local to one host FQDN", () => {
      for (const h of ["reviews", "reviews.shop", "reviews.shop.svc", "reviews.shop.svc.cluster.local"]) {
        expect(t(h), h).to.equal(fqdn);
      }
    });

    it("uses the named namespace, not the manifest's, for qualified forms", () => {
      expect(t("ratings.other")).to.equal("ratings-x-other-x-team-a.vc-team-a.svc.cluster.local");
      expect(t("ratings.other.svc.cluster.local")).to.equal("ratings-x-other-x-team-a.vc-team-a.svc.cluster.local");
    });

    it("hashes a long service host name into the FQDN", () => {
      const svc = "s".repeat(60);
      expect(t(svc)).to.equal(`${hostName(svc, "shop", "team-a")}.vc-team-a.svc.cluster.local`);
      expect(t(svc).split(".")[0]).to.have.length(63);
    });

    it("leaves external domains, wildcards, IPs and other cluster domains as they are", () => {
      for (const h of [
        "api.example.com",
        "www.shop.example.com",
        "*.example.com",
        "*",
        "10.0.0.1",
        "reviews.shop.svc.other.local",
        "reviews.shop.cluster.local",
        "",
        "host:8080",
      ]) {
        expect(t(h), h).to.equal(h);
      }
    });
  });

  describe("classifyHost: every host form is translated, kept as an external host, or refused", () => {
    const ns = new Set(["shop", "web"]);
    const c = (h: string) => classifyHost(h, "shop", ns);
    it("translates trailing-dot FQDNs and svc.ns of the cluster's own namespaces", () => {
      expect(c("reviews.shop.svc.cluster.local.")).to.deep.equal({
        form: "service",
        service: "reviews",
        namespace: "shop",
      });
      expect(c("reviews.")).to.deep.equal({ form: "service", service: "reviews", namespace: "shop" });
      expect(c("api.web")).to.deep.equal({ form: "service", service: "api", namespace: "web" });
      expect(translateServiceHost("reviews.team-x.svc.cluster.local.", "shop", "team-a", "vc-team-a", ns)).to.equal(
        "reviews-x-team-x-x-team-a.vc-team-a.svc.cluster.local",
      );
    });
    it("keeps a two-label external domain (example.com) as an external host, never an in-cluster name", () => {
      expect(c("example.com")).to.deep.equal({ form: "external", host: "example.com" });
      expect(translateServiceHost("example.com", "shop", "team-a", "vc-team-a", ns)).to.equal("example.com");
      for (const h of ["api.example.com", "*.example.com", "*", "10.0.0.1", "2001:db8::1", "*.com"])
        expect(c(h).form, h).to.equal("external");
    });
    it("refuses wildcards over services, other cluster domains, four-label and other cluster-local names", () => {
      for (const h of [
        "*.team-x.svc.cluster.local",
        "*.team-x.svc.cluster.local.",
        "*.svc.cluster.local",
        "*.cluster.local",
        "*.team-x.svc",
        "*.web",
        "reviews.team-x.svc.cluster",
        "reviews.team-x.svc.other.local",
        "reviews.team-x.cluster.local",
        "team-x.svc.cluster.local",
        "a..b",
        "",
        "a.*.example.com",
      ])
        expect(c(h).form, h).to.equal("refused");
    });
  });

  describe("parseServiceHost", () => {
    it("returns the service and its namespace", () => {
      expect(parseServiceHost("reviews", "shop")).to.deep.equal({ service: "reviews", namespace: "shop" });
      expect(parseServiceHost("reviews.other.svc", "shop")).to.deep.equal({ service: "reviews", namespace: "other" });
    });
    it("returns undefined for hosts that are not services of the virtual cluster", () => {
      expect(parseServiceHost("api.example.com", "shop")).to.equal(undefined);
      expect(parseServiceHost("*.shop", "shop")).to.equal(undefined);
    });
  });
});
