// Certificates of certificates/: layout, schema and rule errors at file:line:col, the integration switch, the fleet
// policy's bounds.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAndValidate } from "../../src/validate/index.js";
import { cleanupRepos, makeRepo } from "./fixture.js";

const CERT_ON = "integrations:\n  certManager:\n    enabled: true\n";

/** A valid Certificate; `spec` lines replace the default spec (indented by 2). */
const CERT = (
  name = "web",
  spec = "  secretName: web-cert\n  dnsNames:\n    - web.example.com\n  issuerRef:\n    name: letsencrypt\n    " +
    "kind: ClusterIssuer\n",
  ns = "shop",
): string =>
  `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n${spec}`;

async function validate(files: Record<string, string>) {
  return loadAndValidate(makeRepo({ "clusters/a/values.yaml": CERT_ON, ...files }));
}

async function check(files: Record<string, string>) {
  const r = await validate(files);
  return r.diagnostics.map((d) => [d.file.replace("clusters/a/", ""), d.line, d.col, d.severity, d.code, d.message]);
}

describe("validate/certificates", () => {
  after(cleanupRepos);

  it(
    "accepts a Certificate under certificates/ (nested, multi-document) and puts it in the spec, namespace " +
      "defaulted",
    async () => {
      const r = await validate({
        "clusters/a/certificates/web.yaml": CERT(),
        "clusters/a/certificates/team/more.yml": `${CERT("api", "  secretName: api-cert\n  commonName: api.example.com\n  issuerRef:\n    name: ca\n    kind: ClusterIssuer\n", "shop")}---\n${CERT("plain").replace("  namespace: shop\n", "")}`,
      });
      expect(r.diagnostics).to.deep.equal([]);
      const certs = r.clusters[0]!.spec!.certificates!;
      expect(certs.map((c) => [c.file, c.index, c.object.metadata.namespace, c.object.metadata.name])).to.deep.equal([
        ["clusters/a/certificates/team/more.yml", 0, "shop", "api"],
        ["clusters/a/certificates/team/more.yml", 1, "default", "plain"],
        ["clusters/a/certificates/web.yaml", 0, "shop", "web"],
      ]);
    },
  );

  it(
    "without integrations.certManager.enabled each Certificate is an error at its kind, saying how to " + "enable it",
    async () => {
      const r = await loadAndValidate(
        makeRepo({
          "clusters/a/values.yaml": "{}\n",
          "clusters/a/certificates/web.yaml": `# the gateway's certificate\n${CERT()}---\n${CERT("two")}`,
        }),
      );
      const errors = r.diagnostics.filter((d) => d.severity === "error");
      expect(errors.map((d) => [d.file, d.line, d.col, d.code])).to.deep.equal([
        ["clusters/a/certificates/web.yaml", 3, 1, "certmanager-disabled"],
        ["clusters/a/certificates/web.yaml", 16, 1, "certmanager-disabled"],
      ]);
      expect(errors[0]!.message).to.include("set integrations.certManager.enabled: true");
      expect(r.clusters[0]!.valid).to.equal(false);
      // A document that is not even a mapping still says why the folder cannot be read.
      const bare = await loadAndValidate(
        makeRepo({ "clusters/a/values.yaml": "{}\n", "clusters/a/certificates/x.yaml": "- a\n" }),
      );
      expect(bare.diagnostics.map((d) => d.code)).to.include("certmanager-disabled");
    },
  );

  it("unknown keys are errors with the nearest key suggested, at file:line:col", async () => {
    const spec =
      "  secretName: web-cert\n  dnsName:\n    - web.example.com\n  issuerRef:\n    name: le\n    kind: " +
      "ClusterIssuer\n    grup: cert-manager.io\n  privateKey:\n    algorithm: ecdsa\n";
    expect(await check({ "clusters/a/certificates/web.yaml": CERT("web", spec) })).to.deep.equal([
      [
        "certificates/web.yaml",
        6,
        1,
        "error",
        "certificate-rule",
        "a Certificate needs spec.dnsNames (or spec.commonName): the host names the Gateway serves with it",
      ],
      ["certificates/web.yaml", 8, 3, "error", "schema", 'unknown key "dnsName" in spec: did you mean "dnsNames"?'],
      [
        "certificates/web.yaml",
        13,
        5,
        "error",
        "schema",
        'unknown key "grup" in spec.issuerRef: did you mean "group"?',
      ],
      [
        "certificates/web.yaml",
        15,
        5,
        "error",
        "schema",
        'invalid value "ecdsa" at spec.privateKey.algorithm: did you mean "ECDSA"? use one of RSA, ECDSA, Ed25519',
      ],
    ]);
  });

  it("checks types, DNS names, durations, usages and required keys", async () => {
    const spec =
      '  dnsNames:\n    - Web.Example.com\n  duration: 90 days\n  usages:\n    - server-auth\n  isCA: "no"\n  issuerRef:\n    kind: ClusterIssuer\n';
    const found = (await check({ "clusters/a/certificates/web.yaml": CERT("web", spec) })).map((d) => [d[1], d[5]]);
    expect(found).to.deep.equal([
      [6, 'missing required key "secretName" in spec'],
      [
        8,
        'invalid DNS name "Web.Example.com" at spec.dnsNames[0]: lower-case labels of letters, digits and "-" separated by ".", optionally starting with "*."',
      ],
      [9, 'invalid duration "90 days" at spec.duration: use forms like 100ms, 5s, 1m30s'],
      [
        11,
        'invalid value "server-auth" at spec.usages[0]: did you mean "server auth"? use one of signing, digital signature, content commitment, key encipherment, key agreement, data encipherment, cert sign, crl sign, encipher only, decipher only, any, server auth, client auth, code signing, email protection, s/mime, ipsec end system, ipsec tunnel, ipsec user, timestamping, ocsp signing, microsoft sgc, netscape sgc',
      ],
      [12, 'spec.isCA must be a boolean, got string "no"'],
      [13, 'missing required key "name" in spec.issuerRef'],
    ]);
  });

  it("refuses other kinds and versions under certificates/, naming what is accepted", async () => {
    const issuer = "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: ca\nspec: {}\n";
    const old = CERT().replace("cert-manager.io/v1", "cert-manager.io/v1alpha2");
    const vs = "apiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: x\nspec: {}\n";
    const found = await check({
      "clusters/a/certificates/issuer.yaml": issuer,
      "clusters/a/certificates/old.yaml": old,
      "clusters/a/certificates/vs.yaml": vs,
    });
    expect(found).to.deep.equal([
      [
        "certificates/issuer.yaml",
        2,
        1,
        "error",
        "certificate-kind",
        'unsupported kind "Issuer" under certificates/: only Certificate of cert-manager.io/v1 is synced: issuers are not synced; name a ClusterIssuer of the host in a Certificate\'s spec.issuerRef',
      ],
      [
        "certificates/old.yaml",
        1,
        1,
        "error",
        "certificate-kind",
        'apiVersion "cert-manager.io/v1alpha2" is not accepted: Certificates are accepted as cert-manager.io/v1',
      ],
      [
        "certificates/vs.yaml",
        2,
        1,
        "error",
        "certificate-kind",
        'unsupported kind "VirtualService" under certificates/: only Certificate of cert-manager.io/v1 is synced',
      ],
    ]);
  });

  it(
    "refuses a namespaced issuer (also the Issuer cert-manager assumes without a kind); a ClusterIssuer of any " +
      "group passes",
    async () => {
      const spec = (ref: string) => `  secretName: web-cert\n  dnsNames: [web.example.com]\n  issuerRef:\n${ref}`;
      const found = await check({
        "clusters/a/certificates/1.yaml": CERT("one", spec("    name: ca\n    kind: Issuer\n")),
        "clusters/a/certificates/2.yaml": CERT("two", spec("    name: ca\n")),
        "clusters/a/certificates/3.yaml": CERT(
          "three",
          spec("    name: pca\n    kind: AWSPCAIssuer\n    group: awspca.cert-manager.io\n"),
        ),
        "clusters/a/certificates/4.yaml": CERT(
          "four",
          spec("    name: pca\n    kind: AWSPCAClusterIssuer\n    group: awspca.cert-manager.io\n").replace(
            "web-cert",
            "four-cert",
          ),
        ),
        "clusters/a/certificates/5.yaml": CERT(
          "five",
          spec("    name: le\n    kind: ClusterIssuer\n    group: cert-manager.io\n").replace("web-cert", "five-cert"),
        ),
      });
      expect(found.map((d) => [d[0], d[1], d[2], d[4]])).to.deep.equal([
        ["certificates/1.yaml", 11, 5, "certificate-rule"],
        ["certificates/2.yaml", 10, 5, "certificate-rule"],
        ["certificates/3.yaml", 11, 5, "certificate-rule"],
      ]);
      expect(found[0]![5]).to.equal(
        "issuerRef names a namespaced Issuer: it would be looked up in the host namespace, where vc syncs no " +
          "issuers; use a ClusterIssuer of the host (issuerRef.kind: ClusterIssuer)",
      );
      expect(found[1]![5]).to.include("Issuer (the kind cert-manager assumes when none is given)");
    },
  );

  it("refuses isCA: true and a renewBefore not shorter than the duration (also the 90-day default)", async () => {
    const base =
      "  secretName: web-cert\n  dnsNames: [web.example.com]\n  issuerRef: {name: le, kind: ClusterIssuer}\n";
    const found = await check({
      "clusters/a/certificates/ca.yaml": CERT("ca", `${base}  isCA: true\n`),
      "clusters/a/certificates/renew.yaml": CERT(
        "renew",
        `${base.replace("web-cert", "r-cert")}  duration: 24h\n  renewBefore: 1440m\n`,
      ),
      "clusters/a/certificates/long.yaml": CERT("long", `${base.replace("web-cert", "l-cert")}  renewBefore: 2400h\n`),
      "clusters/a/certificates/ok.yaml": CERT(
        "ok",
        `${base.replace("web-cert", "o-cert")}  isCA: false\n  duration: 48h\n  renewBefore: 24h\n`,
      ),
    });
    expect(found.map((d) => [d[0], d[1], d[5]])).to.deep.equal([
      [
        "certificates/ca.yaml",
        10,
        "isCA: true is refused: a CA certificate issued by a ClusterIssuer the host trusts could sign names the " +
          "fleet policy does not allow; a Gateway needs a leaf certificate (leave isCA out)",
      ],
      [
        "certificates/long.yaml",
        10,
        "renewBefore 2400h is not shorter than the certificate's duration (default 2160h): cert-manager refuses it",
      ],
      [
        "certificates/renew.yaml",
        11,
        "renewBefore 1440m is not shorter than the certificate's duration 24h: cert-manager refuses it",
      ],
    ]);
  });

  it("reports the same Certificate twice, host-name collisions and two Certificates writing one Secret", async () => {
    const found = await check({
      "clusters/a/certificates/a.yaml": CERT("web"),
      "clusters/a/certificates/b.yaml": `${CERT("web")}---\n${CERT("other")}`,
      "clusters/a/certificates/c.yaml": `${CERT("x-x-b", "  secretName: s1\n  dnsNames: [a.example.com]\n  issuerRef: {name: le, kind: ClusterIssuer}\n", "c")}---\n${CERT("x", "  secretName: s2\n  dnsNames: [a.example.com]\n  issuerRef: {name: le, kind: ClusterIssuer}\n", "b-x-c")}`,
    });
    expect(found.map((d) => [d[0], d[1], d[4]])).to.deep.equal([
      ["certificates/a.yaml", 4, "duplicate"],
      ["certificates/a.yaml", 7, "secret-collision"],
      ["certificates/b.yaml", 4, "duplicate"],
      ["certificates/b.yaml", 20, "secret-collision"],
      ["certificates/c.yaml", 4, "host-name-collision"],
      ["certificates/c.yaml", 14, "host-name-collision"],
    ]);
    expect(found[1]![5]).to.equal(
      'Certificates shop/web and shop/other (clusters/a/certificates/b.yaml) both write the Secret "web-cert-x-shop-x-a" on the host: give each its own secretName',
    );
  });

  it(
    "lists certificates/ like mesh/: non-YAML files warned, symlinked folders not followed, a symlink out of the " +
      "repository refused",
    async () => {
      const root = makeRepo({
        "clusters/a/values.yaml": CERT_ON,
        "clusters/a/certificates/web.yaml": CERT(),
        "clusters/a/certificates/README.md": "notes\n",
        "shared/cert.yaml": CERT("shared"),
      });
      symlinkSync(join(root, "shared"), join(root, "clusters/a/certificates/linked"));
      const outside = mkdtempSync(join(tmpdir(), "vc-outside-"));
      mkdirSync(join(root, "clusters/b"));
      symlinkSync(outside, join(root, "clusters/b/certificates"));
      try {
        const r = await loadAndValidate(root);
        expect(r.diagnostics.map((d) => [d.file, d.severity, d.code])).to.deep.equal([
          ["clusters/a/certificates/README.md", "warning", "layout"],
          ["clusters/a/certificates/linked", "warning", "symlink"],
          ["clusters/b/certificates", "error", "symlink"],
          ["clusters/b/values.yaml", "error", "missing-values"],
        ]);
        expect(r.clusters[0]!.spec!.certificates!.map((c) => c.object.metadata.name)).to.deep.equal(["web"]);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    },
  );

  it(
    "the fleet policy bounds dnsNames and a DNS-like commonName by hosts.gateways, secretName by " +
      "gateways.credentialNames",
    async () => {
      const policy = 'hosts:\n  gateways: ["*.apps.example.com"]\ngateways:\n  credentialNames: ["team-*-cert"]\n';
      const ok =
        '  secretName: team-web-cert\n  commonName: Web Team\n  dnsNames: [a.apps.example.com, "*.b.apps.example.com"]\n  issuerRef: {name: le, kind: ClusterIssuer}\n';
      const bad =
        "  secretName: web-cert\n  commonName: evil.example.org\n  dnsNames: [a.apps.example.com, " +
        "bank.example.com]\n  issuerRef: {name: le, kind: ClusterIssuer}\n";
      const r = await loadAndValidate(
        makeRepo({
          "policy.yaml": policy,
          "clusters/a/values.yaml": CERT_ON,
          "clusters/a/certificates/ok.yaml": CERT("ok", ok),
          "clusters/a/certificates/bad.yaml": CERT("bad", bad),
        }),
      );
      expect(r.diagnostics.map((d) => [d.file, d.line, d.col, d.code, d.message])).to.deep.equal([
        [
          "clusters/a/certificates/bad.yaml",
          7,
          15,
          "policy",
          'Certificate shop/bad: secretName "web-cert" is not allowed by the fleet policy (policy.yaml gateways.credentialNames: team-*-cert)',
        ],
        [
          "clusters/a/certificates/bad.yaml",
          8,
          15,
          "policy",
          'Certificate shop/bad: commonName "evil.example.org" is not allowed by the fleet policy (policy.yaml hosts.gateways: *.apps.example.com)',
        ],
        [
          "clusters/a/certificates/bad.yaml",
          9,
          34,
          "policy",
          'Certificate shop/bad: DNS name "bank.example.com" is not allowed by the fleet policy (policy.yaml hosts.gateways: *.apps.example.com)',
        ],
      ]);
      expect(r.clusters[0]!.valid).to.equal(false);
    },
  );

  it("the validation cache gives back the certificates it stored", async () => {
    const cache = mkdtempSync(join(tmpdir(), "vc-cert-cache-"));
    try {
      const root = makeRepo({ "clusters/a/values.yaml": CERT_ON, "clusters/a/certificates/web.yaml": CERT() });
      const first = await loadAndValidate(root, { cacheDir: cache });
      const second = await loadAndValidate(root, { cacheDir: cache });
      expect(second.clusters[0]!.spec!.certificates)
        .to.deep.equal(first.clusters[0]!.spec!.certificates)
        .and.have.length(1);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
