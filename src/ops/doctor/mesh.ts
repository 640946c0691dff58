// Doctor checks of the mesh integration: sidecars, the injection label, Gateway selectors and TLS secrets.
import { finding } from "./coverage.js";
import { meshEnabled, syncedPods } from "./facts.js";
import type { KubeObject } from "../../kube/object.js";
import { asPod } from "../../health/pod-causes.js";
import { podRef, type Check, type Finding, type HostSnapshot } from "./types.js";

const SIDECAR_CONTAINER = "mesh-proxy";
const INJECTION_LABEL = "mesh-injection";
const INJECT_ANNOTATION = "sidecar.mesh.io/inject";

export const sidecars: Check = (s) => {
  if (!meshEnabled(s)) return [];
  const out: Finding[] = [];
  const nsLabels = s.namespaceObject?.metadata.labels ?? {};
  if (!s.unreadable?.namespace && nsLabels[INJECTION_LABEL] !== "enabled") {
    const message =
      `the host namespace lacks the label ${INJECTION_LABEL}=enabled (automatic sidecar injection, ` +
      `optional but recommended)`;
    out.push(
      finding(
        "sidecar-missing",
        { check: "mesh-injection-label", severity: "note", object: `Namespace ${s.namespace}`, message },
        `kubectl label namespace ${s.namespace} ${INJECTION_LABEL}=enabled`,
      ),
    );
  }
  for (const pod of syncedPods(s)) {
    if (pod.metadata.annotations?.[INJECT_ANNOTATION] === "false") continue;
    const containers = pod.spec?.containers ?? [];
    if (containers.some((c) => c.name === SIDECAR_CONTAINER)) continue;
    const message =
      `pod lacks the ${SIDECAR_CONTAINER} container (${containers.length} ` +
      `container${containers.length === 1 ? "" : "s"})`;
    out.push(finding("sidecar-missing", { check: "sidecar-missing", severity: "error", object: podRef(pod), message }));
  }
  return out;
};

export interface GatewaySpec {
  selector?: Record<string, string>;
  servers?: Array<{
    port?: { number?: number; name?: string; protocol?: string };
    hosts?: string[];
    tls?: { mode?: string; credentialName?: string };
  }>;
}

export function gatewaySpec(gw: KubeObject): GatewaySpec {
  return ((gw as { spec?: GatewaySpec }).spec ?? {}) as GatewaySpec;
}

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Ingress pods a Gateway selects (any namespace). */
function gatewayPods(s: Pick<HostSnapshot, "ingressPods">, selector: Record<string, string> | undefined) {
  return selector && Object.keys(selector).length
    ? s.ingressPods.filter((p) => matches(selector, p.metadata.labels))
    : [];
}

/**
 * Where the gateway workload reads a Gateway's TLS Secrets: its pods' namespaces, else (no pod known) the host
 * namespace.
 */
export function secretNamespaces(s: Pick<HostSnapshot, "namespace" | "ingressPods">, gw: KubeObject): string[] {
  const pods = gatewayPods(s, gatewaySpec(gw).selector);
  return pods.length ? [...new Set(pods.map((p) => p.metadata.namespace ?? ""))].sort() : [s.namespace];
}

function ready(p: KubeObject): boolean {
  const pod = asPod(p);
  return (
    pod.status?.phase === "Running" &&
    (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** Services (in the pods' namespaces) whose selector selects some of these pods. */
function servicesOf(s: HostSnapshot, pods: readonly KubeObject[]): KubeObject[] {
  return s.ingressServices.filter((svc) => {
    const selector = (svc.spec as { selector?: Record<string, string> } | undefined)?.selector;
    return (
      !!selector &&
      Object.keys(selector).length > 0 &&
      pods.some((p) => p.metadata.namespace === svc.metadata.namespace && matches(selector, p.metadata.labels))
    );
  });
}

interface ServiceSpec {
  type?: string;
  ports?: Array<{ port?: number; targetPort?: number | string; name?: string; nodePort?: number }>;
  externalIPs?: string[];
}

/**
 * The Gateway's selector matches Ready ingress gateway pods, and a Service exposes them on the Gateway's ports with an
 * address.
 */
export const gateways: Check = (s) => {
  const out: Finding[] = [];
  if (s.unreadable?.ingressPods) return out;
  for (const gw of s.gateways) {
    const spec = gatewaySpec(gw);
    const object = `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`;
    const selector = spec.selector ?? {};
    const pods = gatewayPods(s, selector);
    const sel =
      Object.entries(selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(",") || "(empty)";
    if (pods.length === 0) {
      out.push(
        finding("gateway-unreachable", {
          check: "gateway-selector",
          severity: "error",
          object,
          message: `selector ${sel} matches no ingress gateway pods`,
        }),
      );
      continue;
    }
    const readyPods = pods.filter(ready);
    if (readyPods.length === 0) {
      const states = pods
        .map((p) => `${p.metadata.namespace}/${p.metadata.name} ${asPod(p).status?.phase ?? "(no phase)"}`)
        .sort()
        .join(", ");
      out.push(
        finding(
          "gateway-unreachable",
          {
            check: "gateway-pods-ready",
            severity: "error",
            object,
            message:
              `selector ${sel} matches ${pods.length} ingress gateway pod(s), none Ready (${states}): ` +
              `nothing serves the Gateway`,
          },
          "read why the ingress gateway pods are not Ready (kubectl describe pod)",
        ),
      );
    }
    if (s.unreadable?.ingressServices) continue;
    const services = servicesOf(s, pods);
    const where = [...new Set(pods.map((p) => p.metadata.namespace ?? ""))].sort().join(", ");
    if (services.length === 0) {
      out.push(
        finding(
          "gateway-unreachable",
          {
            check: "gateway-service",
            severity: "error",
            object,
            message:
              `no Service in ${where} selects the ingress gateway pods the selector ${sel} matches: nothing ` +
              `routes traffic to them`,
          },
          "create the ingress gateway's Service (the mesh's installation does)",
        ),
      );
      continue;
    }
    const wanted = [
      ...new Set((spec.servers ?? []).map((sv) => sv.port?.number).filter((n): n is number => typeof n === "number")),
    ].sort((a, b) => a - b);
    const exposes = (svc: KubeObject, n: number) =>
      ((svc.spec as ServiceSpec | undefined)?.ports ?? []).some((p) => p.port === n || p.targetPort === n);
    const unexposed = wanted.filter((n) => !services.some((svc) => exposes(svc, n)));
    const names = services
      .map((svc) => `${svc.metadata.namespace}/${svc.metadata.name}`)
      .sort()
      .join(", ");
    if (unexposed.length) {
      out.push(
        finding(
          "gateway-unreachable",
          {
            check: "gateway-service",
            severity: "error",
            object,
            message:
              `the ingress gateway Service ${names} exposes no port ${unexposed.join(", ")} of the ` +
              `Gateway's servers`,
          },
          "use a port the ingress gateway's Service exposes in the Gateway's servers, or add it to the Service",
        ),
      );
    }
    const external = services.filter((svc) => {
      const type = (svc.spec as ServiceSpec | undefined)?.type ?? "ClusterIP";
      const ingress =
        (svc.status as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer?.ingress ?? [];
      return (
        (type === "LoadBalancer" && ingress.length > 0) ||
        type === "NodePort" ||
        ((svc.spec as ServiceSpec | undefined)?.externalIPs ?? []).length > 0
      );
    });
    if (external.length === 0) {
      const how = services
        .map((svc) => `${svc.metadata.name} is ${(svc.spec as ServiceSpec | undefined)?.type ?? "ClusterIP"}`)
        .join(", ");
      const pending = services.some((svc) => (svc.spec as ServiceSpec | undefined)?.type === "LoadBalancer");
      const message = pending
        ? `the ingress gateway Service ${names} has no external address yet (${how} without ` +
          `status.loadBalancer.ingress): clients outside the cluster cannot reach it`
        : `the ingress gateway Service ${names} has no external address (${how}): only clients inside the cluster ` +
          `reach the Gateway`;
      out.push(
        finding(
          "gateway-unreachable",
          { check: "gateway-external-address", severity: "warning", object, message },
          pending
            ? "check that the host's load balancer controller provisions the Service (kubectl describe service)"
            : "expose the ingress gateway with a LoadBalancer or NodePort Service",
        ),
      );
    }
  }
  return out;
};

/** The secret names (namespace/name) the TLS checks read: where each Gateway's workload reads them. */
export function credentialLookups(s: Pick<HostSnapshot, "namespace" | "gateways" | "ingressPods">): string[] {
  const out = new Set<string>();
  for (const gw of s.gateways) {
    const namespaces = secretNamespaces(s, gw);
    for (const server of gatewaySpec(gw).servers ?? []) {
      const name = server.tls?.credentialName;
      if (name) for (const ns of namespaces) out.add(`${ns}/${name}`);
    }
  }
  return [...out].sort();
}
