// Mesh manifests: kind dispatch and schema checks per document (fields the spec does not show are warnings).
import type { KubeObject } from "../kube/object.js";
import { MESH_API_VERSION, MESH_GROUP } from "../kube/resources.js";
import { isMapping } from "../repo/merge.js";
import type { Finding } from "./finding.js";
import { checkManifest, type ManifestFamily } from "./manifest.js";
import type { SchemaName } from "./schemas.js";

const MESH_KINDS = {
  VirtualService: "mesh/virtualservice",
  DestinationRule: "mesh/destinationrule",
  Gateway: "mesh/gateway",
} as const satisfies Record<string, SchemaName>;
export type MeshKind = keyof typeof MESH_KINDS;

const MESH: ManifestFamily = {
  what: "a mesh manifest",
  apiVersion: MESH_API_VERSION,
  kinds: MESH_KINDS,
  kindCode: "mesh-kind",
  kindsHint: "VirtualService, DestinationRule or Gateway",
  unsupportedKind: (kind) =>
    `unsupported kind "${kind}" under mesh/: only VirtualService, DestinationRule and Gateway of ` +
    `${MESH_API_VERSION} are synced`,
  wrongApiVersion: (apiVersion) =>
    `apiVersion "${apiVersion}" is not accepted: mesh resources are accepted as ` +
    `${MESH_API_VERSION}${apiVersion.startsWith(`${MESH_GROUP}/`) ? "" : " (the mesh's resources use the group networking.mesh.io)"}`,
  unknownKeysWarn: true,
  rules: (kind, spec, index, out) => {
    if (kind === "DestinationRule") destinationRuleRules(spec, index, out);
    else if (kind === "Gateway") gatewayRules(spec, index, out);
    else virtualServiceRules(spec, index, out);
  },
};

/** Findings of one mesh document; `object` is set when the document is a mesh object without errors. */
export function checkMeshDocument(doc: unknown, index: number): { findings: Finding[]; object?: KubeObject } {
  return checkManifest(MESH, doc, index);
}

function rule(
  out: Finding[],
  index: number,
  path: Finding["path"],
  message: string,
  severity: Finding["severity"] = "error",
): void {
  out.push({ doc: index, path, at: "key", severity, code: "mesh-rule", message });
}

function destinationRuleRules(spec: Record<string, unknown>, index: number, out: Finding[]): void {
  const lb =
    isMapping(spec.trafficPolicy) && isMapping(spec.trafficPolicy.loadBalancer)
      ? spec.trafficPolicy.loadBalancer
      : undefined;
  if (lb && lb.simple !== undefined && lb.consistentHash !== undefined) {
    rule(
      out,
      index,
      ["spec", "trafficPolicy", "loadBalancer"],
      "set either loadBalancer.simple or loadBalancer.consistentHash, not both",
    );
  }
  const subsets = Array.isArray(spec.subsets) ? spec.subsets : [];
  const seen = new Set<string>();
  for (let i = 0; i < subsets.length; i++) {
    const s: unknown = subsets[i];
    if (!isMapping(s) || typeof s.name !== "string") continue;
    if (seen.has(s.name)) rule(out, index, ["spec", "subsets", i, "name"], `subset "${s.name}" is defined twice`);
    seen.add(s.name);
  }
}

function gatewayRules(spec: Record<string, unknown>, index: number, out: Finding[]): void {
  const servers = Array.isArray(spec.servers) ? spec.servers : [];
  for (let i = 0; i < servers.length; i++) {
    const s: unknown = servers[i];
    if (!isMapping(s) || !isMapping(s.port)) continue;
    const tls = isMapping(s.tls) ? s.tls : undefined;
    if (s.port.protocol === "HTTPS" && !tls) {
      rule(
        out,
        index,
        ["spec", "servers", i, "port", "protocol"],
        `server on port ${String(s.port.number)} uses HTTPS but has no tls: add tls.mode (SIMPLE) and ` +
          `tls.credentialName`,
      );
    }
    if (tls && (tls.mode === "SIMPLE" || tls.mode === "MUTUAL") && tls.credentialName === undefined) {
      rule(
        out,
        index,
        ["spec", "servers", i, "tls"],
        `tls.mode ${String(tls.mode)} without tls.credentialName: name the certificate secret`,
        "warning",
      );
    }
  }
}

function virtualServiceRules(spec: Record<string, unknown>, index: number, out: Finding[]): void {
  const http = Array.isArray(spec.http) ? spec.http : [];
  for (let i = 0; i < http.length; i++) {
    const h: unknown = http[i];
    if (!isMapping(h) || !Array.isArray(h.route) || h.route.length < 2) continue;
    let sum = 0;
    let weighted = true;
    for (const r of h.route as unknown[]) {
      if (isMapping(r) && typeof r.weight === "number") sum += r.weight;
      else weighted = false;
    }
    if (weighted && sum !== 100)
      rule(out, index, ["spec", "http", i, "route"], `route weights add up to ${sum}, not 100`, "warning");
  }
}
