// cert-manager Certificates of a cluster as host objects: translated name in the host namespace, ownership, and the
// Secret named as its Gateway names it.
import type { KubeObject } from "../kube/object.js";
import type { CertificateManifest } from "../model/cluster.js";
import type { Values } from "../model/values.js";
import { hostSecretName } from "../translate/index.js";
import { type RenderContext, manifestMeta } from "./meta.js";
import { virtualNamespaceOf } from "../translate/mesh/spec.js";

type Json = Record<string, unknown>;

/**
 * One Certificate as its host object. `spec.secretName` becomes the Secret's host name by the rule a Gateway's
 * `tls.credentialName` follows (src/translate/names.ts hostSecretName), so a Gateway of the same virtual namespace
 * that names the secret reads what cert-manager issues. The issuer (a ClusterIssuer, validation refuses others) and
 * every other field stay as written.
 */
function renderCertificate(manifest: CertificateManifest, ctx: RenderContext): KubeObject {
  const obj = manifest.object;
  const out: KubeObject = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: manifestMeta(obj, manifest.file, ctx),
  };
  const spec = obj.spec as Json | undefined;
  if (spec && typeof spec === "object") {
    out.spec =
      typeof spec.secretName === "string"
        ? { ...spec, secretName: hostSecretName(spec.secretName, virtualNamespaceOf(obj), ctx.cluster) }
        : { ...spec };
  }
  return out;
}

/** Every Certificate of a cluster as host objects while integrations.certManager.enabled (none otherwise; unsorted). */
export function renderCertificates(
  certificates: readonly CertificateManifest[] | undefined,
  values: Values,
  ctx: RenderContext,
): KubeObject[] {
  if (!values.integrations.certManager.enabled || !certificates) return [];
  return certificates.map((c) => renderCertificate(c, ctx));
}
