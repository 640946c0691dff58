// cert-manager Certificates of certificates/: kind and schema checks per document, rules of one document and across a
// cluster's certificates.
import { parseDuration } from "../model/duration.js";
import type { KubeObject } from "../kube/object.js";
import { CERT_MANAGER_API_VERSION, CERT_MANAGER_GROUP } from "../kube/resources.js";
import { isMapping } from "../repo/merge.js";
import { hostSecretName } from "../translate/names.js";
import type { Finding } from "./finding.js";
import { checkManifest, type ManifestFamily } from "./manifest.js";
import type { SchemaName } from "./schemas.js";
import type { PlacedFinding } from "./finding.js";
import { collector, identityRules, type PlacedObject } from "./mesh-rules.js";

const SCHEMA: SchemaName = "certmanager/certificate";

/** The one error of a certificates/ document while integrations.certManager.enabled is false (at its `kind`). */
export function certManagerOffFinding(doc: unknown, index: number): Finding {
  const message =
    "certificates/ holds cert-manager Certificates, but the certificate-manager integration is off: set " +
    "integrations.certManager.enabled: true in the cluster's values (or remove the file)";
  return isMapping(doc) && "kind" in doc
    ? { doc: index, path: ["kind"], at: "key", severity: "error", code: "certmanager-disabled", message }
    : { doc: index, path: [], at: "value", severity: "error", code: "certmanager-disabled", message };
}

const CERTIFICATES: ManifestFamily = {
  what: "a certificate manifest",
  apiVersion: CERT_MANAGER_API_VERSION,
  kinds: { Certificate: SCHEMA },
  kindCode: "certificate-kind",
  kindsHint: "Certificate",
  unsupportedKind: (kind) =>
    `unsupported kind "${kind}" under certificates/: only Certificate of ${CERT_MANAGER_API_VERSION} is ` +
    `synced${kind === "Issuer" || kind === "ClusterIssuer" ? ": issuers are not synced; name a ClusterIssuer of the host in a Certificate's spec.issuerRef" : ""}`,
  wrongApiVersion: (apiVersion) =>
    `apiVersion "${apiVersion}" is not accepted: Certificates are accepted as ${CERT_MANAGER_API_VERSION}`,
  rules: (_kind, spec, index, out) => specRules(spec, index, out),
};

/** Findings of one certificates/ document; `object` is set when it is a Certificate without errors. */
export function checkCertificateDocument(doc: unknown, index: number): { findings: Finding[]; object?: KubeObject } {
  return checkManifest(CERTIFICATES, doc, index);
}

/**
 * Whether an issuerRef names a cluster-scoped issuer: cert-manager's ClusterIssuer (kind left out means Issuer), or
 * for an external issuer's group a kind ending in ClusterIssuer (their naming convention). A namespaced issuer would
 * be looked up in the host namespace, where the cluster has none: vc syncs no Issuers.
 */
function clusterScopedIssuer(ref: { kind?: unknown; group?: unknown }): boolean {
  const kind = typeof ref.kind === "string" ? ref.kind : "Issuer";
  const group = typeof ref.group === "string" ? ref.group : CERT_MANAGER_GROUP;
  return group === CERT_MANAGER_GROUP ? kind === "ClusterIssuer" : kind.endsWith("ClusterIssuer");
}

/** Rules of one Certificate that a schema cannot say clearly. */
function specRules(spec: Record<string, unknown>, index: number, out: Finding[]): void {
  const rule = (path: Finding["path"], message: string): void =>
    void out.push({ doc: index, path, at: "key", severity: "error", code: "certificate-rule", message });
  if (!("dnsNames" in spec) && !("commonName" in spec)) {
    rule(["spec"], "a Certificate needs spec.dnsNames (or spec.commonName): the host names the Gateway serves with it");
  }
  const ref = spec.issuerRef;
  if (isMapping(ref) && !clusterScopedIssuer(ref)) {
    const kind = typeof ref.kind === "string" ? ref.kind : undefined;
    rule(
      ["spec", "issuerRef", kind === undefined ? "name" : "kind"],
      `issuerRef names a namespaced ${kind ?? "Issuer (the kind cert-manager assumes when none is given)"}: it ` +
        `would be looked up in the host namespace, where vc syncs no issuers; use a ClusterIssuer of the host ` +
        `(issuerRef.kind: ClusterIssuer)`,
    );
  }
  if (spec.isCA === true) {
    rule(
      ["spec", "isCA"],
      "isCA: true is refused: a CA certificate issued by a ClusterIssuer the host trusts could sign names the " +
        "fleet policy does not allow; a Gateway needs a leaf certificate (leave isCA out)",
    );
  }
  const ms = (v: unknown): number | undefined => {
    try {
      return typeof v === "string" ? parseDuration(v) : undefined;
    } catch {
      return undefined; // the schema reports it
    }
  };
  const duration = ms(spec.duration) ?? 90 * 24 * 3_600_000;
  const renewBefore = ms(spec.renewBefore);
  if (renewBefore !== undefined && renewBefore >= duration) {
    rule(
      ["spec", "renewBefore"],
      `renewBefore ${String(spec.renewBefore)} is not shorter than the certificate's duration ` +
        `${typeof spec.duration === "string" ? spec.duration : "(default 2160h)"}: cert-manager refuses it`,
    );
  }
}

/**
 * Findings across a cluster's Certificates: the same name twice, host names that collide, and two Certificates writing
 * one Secret on the host (cert-manager would reissue it for each in turn).
 */
export function certificateRules(cluster: string, objects: readonly PlacedObject[]): PlacedFinding[] {
  const { out, at } = collector();
  identityRules(cluster, objects, at);
  const bySecret = new Map<string, PlacedObject>();
  for (const o of objects) {
    const ns = o.object.metadata.namespace!;
    const secret = hostSecretName((o.object.spec as { secretName: string }).secretName, ns, cluster);
    const first = bySecret.get(secret);
    if (!first) {
      bySecret.set(secret, o);
      continue;
    }
    if (first.object.metadata.name === o.object.metadata.name && first.object.metadata.namespace === ns) continue; // a duplicate: reported above
    for (const [p, q] of [
      [o, first],
      [first, o],
    ] as const) {
      at(
        p,
        ["spec", "secretName"],
        "error",
        "secret-collision",
        `Certificates ${p.object.metadata.namespace}/${p.object.metadata.name} and ` +
          `${q.object.metadata.namespace}/${q.object.metadata.name} (${q.file}) both write the Secret "${secret}" ` +
          `on the host: give each its own secretName`,
      );
    }
  }
  return out;
}
