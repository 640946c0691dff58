// The proxy's own serving certificate: read from files (a mounted TLS Secret, which may be rotated in place), and the
// CA bundle the virtual cluster's APIService must carry to trust it.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { UserError } from "../model/errors.js";

export interface ServingFiles {
  cert: string;
  key: string;
  /**
   * CA certificate(s) that signed the serving certificate; absent: the chain's own root (or the self-signed
   * certificate).
   */
  ca?: string;
}

export interface ServingMaterial {
  cert: Buffer;
  key: Buffer;
  /** PEM the APIService's `caBundle` holds (base64 of it) so that the aggregator verifies the proxy. */
  caBundle: Buffer;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle, each as its PEM block. */
export function pemCertificates(pem: string): string[] {
  return pem.match(PEM_CERTIFICATE) ?? [];
}

/** A certificate's identity for comparing bundles: its PEM body without line breaks. */
export function certificateBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");
}

/**
 * The CA bundle for a serving certificate chain: `ca` when given, else the last certificate of the chain (a
 * self-signed certificate trusts itself; a chain ends at the certificate nearest its root).
 */
export function caBundleOf(certPem: string, caPem?: string): Buffer {
  const source = caPem ?? certPem;
  const certificates = pemCertificates(source);
  if (certificates.length === 0)
    throw new Error(
      caPem !== undefined ? "the CA file holds no PEM certificate" : "the certificate file holds no PEM certificate",
    );
  for (const pem of certificates) new X509Certificate(pem); // throws on a damaged certificate, before anyone trusts it
  return Buffer.from(`${caPem !== undefined ? certificates.join("\n") : certificates.at(-1)!}\n`);
}

function read(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UserError(`cannot read ${flag} ${path}: ${err instanceof Error ? err.message : err}`);
  }
}

/** Reads the serving pair (and CA) from their files; throws UserError naming the flag of a missing or broken file. */
export function readServingMaterial(files: ServingFiles): ServingMaterial {
  const cert = read(files.cert, "--tls-cert");
  const key = read(files.key, "--tls-key");
  const ca = files.ca !== undefined ? read(files.ca, "--tls-ca").toString("utf8") : undefined;
  try {
    return { cert, key, caBundle: caBundleOf(cert.toString("utf8"), ca) };
  } catch (err) {
    throw new UserError(
      `cannot use the serving certificate ${files.ca ?? files.cert}: ${err instanceof Error ? err.message : err}`,
    );
  }
}

/** True when two readings differ in anything a TLS context or the APIService depends on. */
export function servingChanged(a: ServingMaterial, b: ServingMaterial): boolean {
  return !a.cert.equals(b.cert) || !a.key.equals(b.key) || !a.caBundle.equals(b.caBundle);
}
