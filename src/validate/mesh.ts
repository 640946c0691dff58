// Mesh manifests: kind dispatch and schema checks per document (fields the spec does not show are warnings).
import type { KubeObject } from "../kube/object.js";
import { MESH_API_VERSION, MESH_GROUP } from "../kube/resources.js";
import { isMapping } from "../repo/merge.js";
import type { Finding } from "./finding.js";
import { schemaFindings } from "./schema-errors.js";
import { validatorFor, type SchemaName } from "./schemas.js";
import { kindOf } from "./values.js";

export const MESH_KINDS = { VirtualService: "mesh/virtualservice", DestinationRule: "mesh/destinationrule", Gateway: "mesh/gateway" } as const satisfies Record<string, SchemaName>;
export type MeshKind = keyof typeof MESH_KINDS;

/** Namespace of a mesh document that names none. */
export const DEFAULT_NAMESPACE = "default";

/** Findings of one mesh document; `object` is set when the document is a mesh object without errors. */
export function checkMeshDocument(doc: unknown, index: number): { findings: Finding[]; object?: KubeObject } {
  const at = (message: string, path: Finding["path"] = [], code = "mesh-kind"): Finding => ({ doc: index, path, at: "key", severity: "error", code, message });
  if (!isMapping(doc)) return { findings: [{ ...at(`a mesh manifest must be a mapping, found ${kindOf(doc)}`, [], "not-a-mapping"), at: "value" }] };
  const { apiVersion, kind } = doc;
  if (typeof kind !== "string" || kind === "") return { findings: [at("missing kind: use VirtualService, DestinationRule or Gateway")] };
  if (typeof apiVersion !== "string" || apiVersion === "") return { findings: [at(`missing apiVersion: use ${MESH_API_VERSION}`)] };
  if (!Object.hasOwn(MESH_KINDS, kind)) {
    return { findings: [at(`unsupported kind "${kind}" under mesh/: only VirtualService, DestinationRule and Gateway of ${MESH_API_VERSION} are synced`, ["kind"])] };
  }
  if (apiVersion !== MESH_API_VERSION) {
    const hint = apiVersion.startsWith(`${MESH_GROUP}/`) ? "" : " (the mesh's resources use the group networking.mesh.io)";
    return { findings: [at(`apiVersion "${apiVersion}" is not accepted: mesh resources are accepted as ${MESH_API_VERSION}${hint}`, ["apiVersion"])] };
  }
  const schema = MESH_KINDS[kind as MeshKind];
  const validate = validatorFor(schema);
  const findings = validate(doc) ? [] : schemaFindings(schema, index, doc, validate.errors ?? [], { unknownKeysWarn: true, what: kind });
  findings.push(...kindRules(kind as MeshKind, doc, index));
  if (findings.some((f) => f.severity === "error")) return { findings };
  const object = doc as unknown as KubeObject;
  if (object.metadata.namespace === undefined) object.metadata.namespace = DEFAULT_NAMESPACE;
  return { findings, object };
}

/** Rules of a single document that a schema cannot say clearly. */
function kindRules(kind: MeshKind, doc: Record<string, unknown>, index: number): Finding[] {
  const out: Finding[] = [];
  const spec = isMapping(doc.spec) ? doc.spec : {};
  const err = (path: Finding["path"], message: string, severity: Finding["severity"] = "error", code = "mesh-rule"): void => {
    out.push({ doc: index, path, at: "key", severity, code, message });
  };
  if (kind === "DestinationRule") {
    const lb = isMapping(spec.trafficPolicy) && isMapping(spec.trafficPolicy.loadBalancer) ? spec.trafficPolicy.loadBalancer : undefined;
    if (lb && lb.simple !== undefined && lb.consistentHash !== undefined) {
      err(["spec", "trafficPolicy", "loadBalancer"], "set either loadBalancer.simple or loadBalancer.consistentHash, not both");
    }
    const seen = new Set<string>();
    (Array.isArray(spec.subsets) ? spec.subsets : []).forEach((s, i) => {
      if (isMapping(s) && typeof s.name === "string") {
        if (seen.has(s.name)) err(["spec", "subsets", i, "name"], `subset "${s.name}" is defined twice`);
        seen.add(s.name);
      }
    });
  } else if (kind === "Gateway") {
    (Array.isArray(spec.servers) ? spec.servers : []).forEach((s, i) => {
      if (!isMapping(s) || !isMapping(s.port)) return;
      const tls = isMapping(s.tls) ? s.tls : undefined;
      if (s.port.protocol === "HTTPS" && !tls) {
        err(["spec", "servers", i, "port", "protocol"], `server on port ${String(s.port.number)} uses HTTPS but has no tls: add tls.mode (SIMPLE) and tls.credentialName`);
      }
      if (tls && (tls.mode === "SIMPLE" || tls.mode === "MUTUAL") && tls.credentialName === undefined) {
        err(["spec", "servers", i, "tls"], `tls.mode ${String(tls.mode)} without tls.credentialName: name the certificate secret`, "warning");
      }
    });
  } else {
    (Array.isArray(spec.http) ? spec.http : []).forEach((h, i) => {
      if (!isMapping(h) || !Array.isArray(h.route) || h.route.length < 2) return;
      const weights = h.route.map((r) => (isMapping(r) && typeof r.weight === "number" ? r.weight : undefined));
      if (weights.every((w) => w !== undefined)) {
        const sum = (weights as number[]).reduce((a, b) => a + b, 0);
        if (sum !== 100) err(["spec", "http", i, "route"], `route weights add up to ${sum}, not 100`, "warning");
      }
    });
  }
  return out;
}
