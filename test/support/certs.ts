// Throwaway self-signed serving certificates for given DNS names and lifetimes (openssl CLI), as a Gateway's TLS Secret
// holds them.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** PEM certificate and key for `dnsNames`, valid from now for `days` days. */
export function servingCertificate(dnsNames: readonly string[], days: number): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "vc-cert-"));
  try {
    const key = join(dir, "tls.key");
    const cert = join(dir, "tls.crt");
    const san = `subjectAltName=${dnsNames.map((d) => `DNS:${d}`).join(",")}`;
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        String(days),
        "-subj",
        `/CN=${dnsNames[0]}`,
        "-addext",
        san,
      ],
      { stdio: "pipe" },
    );
    return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A `kubernetes.io/tls` Secret holding that certificate. */
export function tlsSecret(
  namespace: string,
  name: string,
  pem: { cert: string; key: string },
): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
  type: string;
  data: Record<string, string>;
} {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { name, namespace },
    data: { "tls.crt": b64(pem.cert), "tls.key": b64(pem.key) },
  };
}
