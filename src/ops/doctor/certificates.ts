// Doctor check of gateway certificates: a Gateway whose TLS Secret comes from a cert-manager Certificate that is not
// Ready.
import type { KubeObject } from "../../kube/object.js";
import { finding } from "./coverage.js";
import { gatewaySpec, secretNamespaces } from "./mesh.js";
import { bareHost, covers } from "./tls-cert.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface GatewayServers {
  servers?: Array<{ port?: { number?: number }; tls?: { credentialName?: string } }>;
}

/** The Certificate of the host namespace that issues the Secret `secretName`, if any. */
function issuing(certificates: readonly KubeObject[], namespace: string, secretName: string): KubeObject | undefined {
  return certificates.find(
    (c) =>
      c.metadata.namespace === namespace && (c.spec as { secretName?: unknown } | undefined)?.secretName === secretName,
  );
}

function readyOf(certificate: KubeObject): Condition | undefined {
  return (certificate.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === "Ready");
}

/**
 * Spec section 7, "HTTPS certificate errors": for each Gateway server naming a Secret that a Certificate issues (the
 * Certificate whose spec.secretName is the Gateway's tls.credentialName, both as on the host), a Ready condition that
 * is not True is a finding: an error while the Secret does not exist yet, a warning while an earlier one is served.
 */
export const gatewayCertificates: Check = (s: HostSnapshot) => {
  if (!s.certificates || s.unreadable?.certificates) return [];
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const gw of s.gateways) {
    for (const server of (gw.spec as GatewayServers | undefined)?.servers ?? []) {
      const secret = server.tls?.credentialName;
      if (!secret) continue;
      const cert = issuing(s.certificates, s.namespace, secret);
      if (!cert) continue;
      const key = `${gw.metadata.name}\u0000${cert.metadata.name}`;
      const ready = readyOf(cert);
      if (ready?.status === "True" || seen.has(key)) continue;
      seen.add(key);
      const why = ready
        ? `Ready is ` +
          `${ready.status ?? "unknown"}${ready.reason ? ` (${ready.reason})` : ""}${ready.message ? `: ${ready.message}` : ""}`
        : "it has no Ready condition yet";
      const served =
        !s.unreadable?.secrets && secretNamespaces(s, gw).some((ns) => s.existingSecrets.includes(`${ns}/${secret}`));
      const message =
        `the Certificate ${cert.metadata.namespace}/${cert.metadata.name} that issues ` +
        `tls.credentialName ${secret} (port ${server.port?.number ?? "?"}) is not Ready: ` +
        `${why}${served ? "; the Secret holds an earlier certificate" : ""}`;
      const how =
        `kubectl -n ${s.namespace} describe certificate ${cert.metadata.name} shows why cert-manager has ` +
        `not issued it`;
      out.push(
        finding(
          "https-certificate",
          {
            check: "certificate-not-ready",
            severity: served ? "warning" : "error",
            object: `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`,
            message,
          },
          how,
        ),
      );
    }
  }
  return out;
};

/** A certificate expiring within this many days is a warning. */
const EXPIRY_WARNING_DAYS = 14;

const DAY_MS = 86_400_000;

/**
 * Spec section 7, "HTTPS certificate errors": the Secret each Gateway server names in `tls.credentialName` exists where
 * the gateway workload reads it (its pods' namespace: for a shared ingress, not the cluster's), and the certificate in
 * it is valid now, not about to expire, and names the server's hosts.
 */
export const gatewaySecrets: Check = (s: HostSnapshot) => {
  if (s.unreadable?.secrets || s.unreadable?.ingressPods) return [];
  const out: Finding[] = [];
  const now = Date.parse(s.checkedAt ?? "");
  for (const gw of s.gateways) {
    const object = `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`;
    const namespaces = secretNamespaces(s, gw);
    for (const server of gatewaySpec(gw).servers ?? []) {
      const name = server.tls?.credentialName;
      if (!name) continue;
      const port = `port ${server.port?.number ?? "?"}`;
      for (const ns of namespaces) {
        const ref = `${ns}/${name}`;
        if (!s.existingSecrets.includes(ref)) {
          const shared =
            ns !== s.namespace
              ? ` (the gateway pods run in ${ns}: the Secret must be there, a copy in ${s.namespace} is not read)`
              : "";
          // A Certificate still being issued is the certificate-not-ready finding.
          if (issuing(s.certificates ?? [], s.namespace, name) && ns === s.namespace) continue;
          out.push(
            finding("https-certificate", {
              check: "tls-secret",
              severity: "error",
              object,
              message: `tls.credentialName ${name} (${port}) names a Secret that does not exist in ${ns}${shared}`,
            }),
          );
          continue;
        }
        const cert = s.tlsCertificates?.[ref];
        if (!cert) continue;
        const what = `the certificate in Secret ${ref} (${port})`;
        const add = (severity: "error" | "warning", message: string, how?: string) =>
          out.push(finding("https-certificate", { check: "tls-certificate", severity, object, message }, how));
        if (cert.error) {
          add("error", `the Secret ${ref} (${port}) holds no usable certificate: ${cert.error}`);
          continue;
        }
        const from = Date.parse(cert.validFrom ?? "");
        const to = Date.parse(cert.validTo ?? "");
        if (Number.isFinite(now) && Number.isFinite(to) && to <= now)
          add(
            "error",
            `${what} expired on ${cert.validTo}`,
            "renew the certificate (cert-manager renews what it issues: check its Certificate)",
          );
        else if (Number.isFinite(now) && Number.isFinite(from) && from > now)
          add(
            "error",
            `${what} is not valid before ${cert.validFrom}`,
            "check the clock of the issuer and of the host",
          );
        else if (Number.isFinite(now) && Number.isFinite(to) && to - now < EXPIRY_WARNING_DAYS * DAY_MS)
          add(
            "warning",
            `${what} expires on ${cert.validTo}, within ${EXPIRY_WARNING_DAYS} days`,
            "renew it before then",
          );
        const hosts = (server.hosts ?? []).map(bareHost).filter((h) => h !== "*");
        const uncovered = hosts.filter((h) => !covers(cert.dnsNames ?? [], h));
        if (uncovered.length)
          add(
            "error",
            `${what} does not name ${uncovered.join(", ")} (it names ` +
              `${(cert.dnsNames ?? []).join(", ") || "no DNS name"}): clients refuse the handshake`,
            "issue the certificate for the Gateway's hosts (dnsNames of its Certificate)",
          );
      }
    }
  }
  return out;
};
