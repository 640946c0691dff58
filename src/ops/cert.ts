// Validity of a kubeconfig user's client certificate, read with node:crypto.
import { X509Certificate } from "node:crypto";

/** Suggested warning window before expiry. */
const CERT_WARN_DAYS = 7;

export interface CertInfo {
  subject: string;
  notAfter: Date;
  /** Whole days left (negative when expired). */
  daysLeft: number;
  state: "valid" | "expiring" | "expired";
}

/** Reads a PEM certificate (the first of a chain); undefined when there is none. */
export function certInfo(pem: string | Buffer | undefined, now = new Date()): CertInfo | undefined {
  if (!pem || pem.length === 0) return undefined;
  const cert = new X509Certificate(pem);
  const notAfter = new Date(cert.validTo);
  const ms = notAfter.getTime() - now.getTime();
  const daysLeft = Math.floor(ms / 86_400_000);
  const state = ms <= 0 ? "expired" : ms <= CERT_WARN_DAYS * 86_400_000 ? "expiring" : "valid";
  return { subject: cert.subject.replaceAll("\n", ", "), notAfter, daysLeft, state };
}

/** One line for the user about the certificate. */
export function certLine(info: CertInfo): string {
  const when = info.notAfter.toISOString();
  if (info.state === "expired")
    return (
      `warning: the client certificate (${info.subject}) expired at ${when}: reconnect after the control ` +
      `plane renews it (vc disconnect, vc connect)`
    );
  if (info.state === "expiring")
    return `warning: the client certificate (${info.subject}) expires at ${when}, in ${info.daysLeft} day(s)`;
  return `client certificate (${info.subject}) valid until ${when} (${info.daysLeft} days)`;
}
