// What vc doctor keeps of a Gateway's TLS Secret: the certificate's validity window and names, read with node's
// X509Certificate from `tls.crt` (public); the key is never read into the snapshot.
import { X509Certificate } from "node:crypto";

export interface CertificateFacts {
  /** ISO times of the certificate's validity window. */
  validFrom?: string;
  validTo?: string;
  /** DNS names of subjectAltName (the common name when there are none). */
  dnsNames?: string[];
  /** Why the certificate could not be read: no `tls.crt`, not PEM. */
  error?: string;
}

/** The first certificate of the Secret's `tls.crt` (base64 in `data`), summarised. */
export function certificateFacts(secret: unknown): CertificateFacts {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data ?? {};
  const encoded = data["tls.crt"];
  if (!encoded) return { error: "it has no tls.crt" };
  try {
    const cert = new X509Certificate(Buffer.from(encoded, "base64"));
    const sans = (cert.subjectAltName ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter((x) => x.startsWith("DNS:"))
      .map((x) => x.slice(4).toLowerCase());
    const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
    return {
      validFrom: new Date(cert.validFrom).toISOString(),
      validTo: new Date(cert.validTo).toISOString(),
      dnsNames: sans.length ? sans : cn ? [cn.toLowerCase()] : [],
    };
  } catch (err) {
    return { error: `its tls.crt is not a PEM certificate (${(err as Error).message})` };
  }
}

/** A Gateway host without its `namespace/` prefix. */
export function bareHost(host: string): string {
  return (host.includes("/") ? host.slice(host.indexOf("/") + 1) : host).toLowerCase();
}

/** Whether a certificate name (`a.example.com`, `*.example.com`) covers a Gateway host (`ns/` prefix dropped). */
export function covers(names: readonly string[], host: string): boolean {
  const h = bareHost(host);
  return names.some(
    (n) =>
      n === h ||
      (n.startsWith("*.") &&
        h.endsWith(n.slice(1)) &&
        !h.slice(0, -(n.length - 1)).includes(".") &&
        h.length > n.length - 1),
  );
}
