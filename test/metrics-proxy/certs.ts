// Test certificates made with the real openssl: a CA, a serving certificate for 127.0.0.1, and client certificates.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CertSet {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from another CA, which the proxy must refuse. */
  strangerCert: string;
  strangerKey: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

function ca(dir: string, name: string, subject = `/CN=${name}`): void {
  openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-subj",
    subject,
  );
}

function signed(dir: string, name: string, caName: string, subject: string, ext?: string): void {
  openssl(
    dir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    subject,
  );
  const args = [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${caName}.crt`,
    "-CAkey",
    `${caName}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "2",
  ];
  if (ext) {
    writeFileSync(join(dir, `${name}.ext`), ext);
    args.push("-extfile", `${name}.ext`);
  }
  openssl(dir, ...args);
}

let cached: CertSet | undefined;

/** Makes (once per test run) the certificates the TLS tests use. */
export function makeCerts(): CertSet {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "vc-mp-certs-"));
  ca(dir, "ca");
  ca(dir, "other-ca");
  signed(
    dir,
    "server",
    "ca",
    "/CN=vc-metrics-proxy",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  signed(dir, "client", "ca", "/CN=aggregator/O=system:masters", "extendedKeyUsage=clientAuth\n");
  signed(dir, "stranger", "other-ca", "/CN=stranger", "extendedKeyUsage=clientAuth\n");
  const p = (f: string) => join(dir, f);
  cached = {
    dir,
    caCert: p("ca.crt"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    clientCert: p("client.crt"),
    clientKey: p("client.key"),
    strangerCert: p("stranger.crt"),
    strangerKey: p("stranger.key"),
  };
  return cached;
}

export const read = (path: string) => readFileSync(path);

/** A virtual API server's front-proxy PKI: its CA and the client pair its front proxy presents. */
export interface FrontProxyPki {
  caCert: string;
  caKey: string;
  clientCert: string;
  clientKey: string;
  /** PEM of the CA, as the server publishes it in extension-apiserver-authentication. */
  caPem: string;
}

/**
 * A front-proxy CA named `/CN=<caName>` (clusters' CAs often share one name) and a client certificate `cn` it signs,
 * in a folder of their own.
 */
export function frontProxyPki(caName = "front-proxy-ca", cn = "front-proxy-client"): FrontProxyPki {
  const dir = mkdtempSync(join(tmpdir(), "vc-mp-fp-"));
  ca(dir, "fp-ca", `/CN=${caName}`);
  signed(dir, "fp-client", "fp-ca", `/CN=${cn}`, "extendedKeyUsage=clientAuth\n");
  const p = (f: string) => join(dir, f);
  return {
    caCert: p("fp-ca.crt"),
    caKey: p("fp-ca.key"),
    clientCert: p("fp-client.crt"),
    clientKey: p("fp-client.key"),
    caPem: readFileSync(p("fp-ca.crt"), "utf8"),
  };
}

/** Another client certificate `cn` signed by a PKI's CA. */
export function clientOf(pki: FrontProxyPki, cn: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "vc-mp-fpc-"));
  writeFileSync(join(dir, "fp-ca.crt"), readFileSync(pki.caCert));
  writeFileSync(join(dir, "fp-ca.key"), readFileSync(pki.caKey));
  signed(dir, "c", "fp-ca", `/CN=${cn}`, "extendedKeyUsage=clientAuth\n");
  return { cert: join(dir, "c.crt"), key: join(dir, "c.key") };
}
