// Doctor checks of the mesh integration: sidecars, the injection label, Gateway selectors and TLS secrets.
import { finding } from "./coverage.js";
import { meshEnabled, syncedPods } from "./facts.js";
import { podRef, type Check, type Finding, type HostSnapshot } from "./types.js";

export const SIDECAR_CONTAINER = "mesh-proxy";
export const INJECTION_LABEL = "mesh-injection";
export const INJECT_ANNOTATION = "sidecar.mesh.io/inject";

export const sidecars: Check = (s) => {
  if (!meshEnabled(s)) return [];
  const out: Finding[] = [];
  const nsLabels = s.namespaceObject?.metadata.labels ?? {};
  if (!s.unreadable?.namespace && nsLabels[INJECTION_LABEL] !== "enabled") {
    const message = `the host namespace lacks the label ${INJECTION_LABEL}=enabled (automatic sidecar injection, optional but recommended)`;
    out.push(finding("sidecar-missing", { check: "mesh-injection-label", severity: "note", object: `Namespace ${s.namespace}`, message }, `kubectl label namespace ${s.namespace} ${INJECTION_LABEL}=enabled`));
  }
  for (const pod of syncedPods(s)) {
    if (pod.metadata.annotations?.[INJECT_ANNOTATION] === "false") continue;
    const containers = pod.spec?.containers ?? [];
    if (containers.some((c) => c.name === SIDECAR_CONTAINER)) continue;
    const message = `pod lacks the ${SIDECAR_CONTAINER} container (${containers.length} container${containers.length === 1 ? "" : "s"})`;
    out.push(finding("sidecar-missing", { check: "sidecar-missing", severity: "error", object: podRef(pod), message }));
  }
  return out;
};

interface GatewaySpec {
  selector?: Record<string, string>;
  servers?: Array<{ port?: { number?: number; name?: string }; tls?: { mode?: string; credentialName?: string } }>;
}

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Ingress pods a Gateway selects (any namespace). */
export function gatewayPods(s: HostSnapshot, selector: Record<string, string>) {
  return s.ingressPods.filter((p) => matches(selector, p.metadata.labels));
}

export const gateways: Check = (s) => {
  const out: Finding[] = [];
  if (s.unreadable?.ingressPods) return out;
  for (const gw of s.gateways) {
    const spec = ((gw as { spec?: GatewaySpec }).spec ?? {}) as GatewaySpec;
    const object = `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`;
    const selector = spec.selector ?? {};
    const pods = Object.keys(selector).length ? gatewayPods(s, selector) : [];
    if (pods.length === 0) {
      const sel = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(",") || "(empty)";
      out.push(finding("gateway-unreachable", { check: "gateway-selector", severity: "error", object, message: `selector ${sel} matches no ingress gateway pods` }));
    }
    const namespaces = new Set([s.namespace, ...pods.map((p) => p.metadata.namespace ?? "")]);
    for (const server of spec.servers ?? []) {
      const name = server.tls?.credentialName;
      if (!name || s.unreadable?.secrets) continue;
      if ([...namespaces].some((ns) => s.existingSecrets.includes(`${ns}/${name}`))) continue;
      const message = `tls.credentialName ${name} (port ${server.port?.number ?? "?"}) names a secret that does not exist in ${[...namespaces].sort().join(", ")}`;
      out.push(finding("https-certificate", { check: "tls-secret", severity: "error", object, message }));
    }
  }
  return out;
};

/** The secret names (namespace/name) the TLS check needs to look up, and where. */
export function credentialLookups(s: Pick<HostSnapshot, "namespace" | "gateways" | "ingressPods">): string[] {
  const out = new Set<string>();
  for (const gw of s.gateways) {
    const spec = ((gw as { spec?: GatewaySpec }).spec ?? {}) as GatewaySpec;
    const pods = spec.selector && Object.keys(spec.selector).length ? s.ingressPods.filter((p) => matches(spec.selector!, p.metadata.labels)) : [];
    const namespaces = new Set([s.namespace, ...pods.map((p) => p.metadata.namespace ?? "")]);
    for (const server of spec.servers ?? []) {
      const name = server.tls?.credentialName;
      if (name) for (const ns of namespaces) out.add(`${ns}/${name}`);
    }
  }
  return [...out].sort();
}
