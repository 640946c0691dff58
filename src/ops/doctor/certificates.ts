// Doctor check of gateway certificates: a Gateway whose TLS Secret comes from a cert-manager Certificate that is not Ready.
import type { KubeObject } from "../../kube/object.js";
import { finding } from "./coverage.js";
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
  return certificates.find((c) => c.metadata.namespace === namespace && (c.spec as { secretName?: unknown } | undefined)?.secretName === secretName);
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
      const why = ready ? `Ready is ${ready.status ?? "unknown"}${ready.reason ? ` (${ready.reason})` : ""}${ready.message ? `: ${ready.message}` : ""}` : "it has no Ready condition yet";
      const served = !s.unreadable?.secrets && s.existingSecrets.includes(`${s.namespace}/${secret}`);
      const message = `the Certificate ${cert.metadata.namespace}/${cert.metadata.name} that issues tls.credentialName ${secret} (port ${server.port?.number ?? "?"}) is not Ready: ${why}${served ? "; the Secret holds an earlier certificate" : ""}`;
      const how = `kubectl -n ${s.namespace} describe certificate ${cert.metadata.name} shows why cert-manager has not issued it`;
      out.push(finding("https-certificate", { check: "certificate-not-ready", severity: served ? "warning" : "error", object: `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`, message }, how));
    }
  }
  return out;
};
