// Doctor check of NetworkPolicies in the host namespace (row "Connection hangs"): those that select the control plane's
// pod must admit what vc and the syncer need: connections to the virtual API server's port, and the syncer's
// connections to the host API server (its addresses, as the `kubernetes` Service's EndpointSlices or Endpoints list
// them).
import { BlockList, isIPv4, isIPv6 } from "node:net";
import type { KubeObject } from "../../kube/object.js";
import { API_SERVER_PORT } from "../../render/statefulSet.js";
import { finding } from "./coverage.js";
import { controlPlanePod } from "./facts.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

export const networkPoliciesPath = (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;
export const API_ENDPOINTS_PATH = "/api/v1/namespaces/default/endpoints/kubernetes";
/**
 * The EndpointSlices of the `kubernetes` Service (discovery.k8s.io/v1, where discovery lists it: v1 Endpoints are
 * deprecated).
 */
export const API_ENDPOINT_SLICES_PATH = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";
/** The label naming an EndpointSlice's Service. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}
interface Port {
  port?: number | string;
  protocol?: string;
  endPort?: number;
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicySpec {
  podSelector?: LabelSelector;
  policyTypes?: string[];
  ingress?: Array<{ from?: Peer[]; ports?: Port[] }>;
  egress?: Array<{ to?: Peer[]; ports?: Port[] }>;
}

/** Whether a label selector matches labels (an empty selector matches all). */
function selects(sel: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  if (!Object.entries(sel?.matchLabels ?? {}).every(([k, v]) => l[k] === v)) return false;
  return (sel?.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(l, e.key);
    switch (e.operator) {
      case "In":
        return has && (e.values ?? []).includes(l[e.key]!);
      case "NotIn":
        return !has || !(e.values ?? []).includes(l[e.key]!);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
}

/** Whether a rule's ports admit TCP `port` (named ports are matched by name; no ports: every port). */
function portAdmitted(ports: Port[] | undefined, port: number, name?: string): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some(
    (p) =>
      (p.protocol ?? "TCP") === "TCP" &&
      (p.port === undefined ||
        p.port === port ||
        (name !== undefined && p.port === name) ||
        (typeof p.port === "number" && p.endPort !== undefined && port >= p.port && port <= p.endPort)),
  );
}

function inBlock(ip: string, block: { cidr: string; except?: string[] }): boolean {
  const family = isIPv4(ip) ? "ipv4" : isIPv6(ip) ? "ipv6" : undefined;
  if (!family) return false;
  const list = (cidrs: string[]) => {
    const b = new BlockList();
    for (const c of cidrs) {
      const [net, bits] = c.split("/");
      if (net && bits && (isIPv4(net) ? "ipv4" : "ipv6") === family) b.addSubnet(net, Number(bits), family);
    }
    return b;
  };
  return list([block.cidr]).check(ip, family) && !list(block.except ?? []).check(ip, family);
}

const spec = (np: KubeObject) => (np.spec ?? {}) as PolicySpec;
const types = (np: KubeObject) => spec(np).policyTypes ?? ["Ingress", ...(spec(np).egress ? ["Egress"] : [])];

/** The NetworkPolicies of the host namespace that select the control plane's pod, and restrict `direction`. */
function restricting(
  s: HostSnapshot,
  labels: Record<string, string> | undefined,
  direction: "Ingress" | "Egress",
): KubeObject[] {
  return (s.networkPolicies ?? []).filter(
    (np) => selects(spec(np).podSelector, labels) && types(np).includes(direction),
  );
}

export const networkPolicies: Check = (s) => {
  if (!s.networkPolicies || s.unreadable?.networkPolicies) return [];
  const pod = controlPlanePod(s);
  const labels = pod?.metadata.labels ?? (s.statefulSet ? { release: s.cluster, app: "vc" } : undefined);
  if (!labels) return [];
  const out: Finding[] = [];
  const object = (np: KubeObject) => `NetworkPolicy ${np.metadata.namespace ?? s.namespace}/${np.metadata.name}`;
  const named = (nps: KubeObject[]) =>
    nps
      .map((np) => np.metadata.name)
      .sort()
      .join(", ");

  const ingress = restricting(s, labels, "Ingress");
  if (ingress.length) {
    const rules = ingress
      .flatMap((np) => spec(np).ingress ?? [])
      .filter((r) => portAdmitted(r.ports, API_SERVER_PORT, "https"));
    if (rules.length === 0) {
      const message =
        `NetworkPolicies ${named(ingress)} select the control plane's pod and admit no connection to ` +
        `the virtual API server's port ${API_SERVER_PORT}: vc connect, kubectl and the metrics proxy hang`;
      out.push(
        finding(
          "connection",
          { check: "network-policy", severity: "error", object: object(ingress[0]!), message },
          `admit TCP ${API_SERVER_PORT} to pods release=${s.cluster},app=vc in a NetworkPolicy of ${s.namespace}`,
        ),
      );
    } else if (!rules.some((r) => !r.from || r.from.length === 0)) {
      const message =
        `NetworkPolicies ${named(ingress)} admit connections to the virtual API server's port ` +
        `${API_SERVER_PORT} only from the sources their rules list: clients elsewhere hang`;
      out.push(
        finding(
          "connection",
          { check: "network-policy", severity: "warning", object: object(ingress[0]!), message },
          "make sure the clients (vc connect's users, the metrics proxy) are among the admitted sources",
        ),
      );
    }
  }

  const egress = restricting(s, labels, "Egress");
  const endpoints = s.apiServerEndpoints ?? [];
  if (egress.length && endpoints.length) {
    const rules = egress.flatMap((np) => spec(np).egress ?? []);
    const blocked = endpoints.filter(
      (ep) =>
        !rules.some(
          (r) =>
            portAdmitted(r.ports, ep.port) &&
            (!r.to ||
              r.to.length === 0 ||
              r.to.some((peer) => peer.ipBlock !== undefined && inBlock(ep.ip, peer.ipBlock))),
        ),
    );
    if (blocked.length === endpoints.length) {
      const where = blocked.map((ep) => `${ep.ip}:${ep.port}`).join(", ");
      const message =
        `NetworkPolicies ${named(egress)} select the control plane's pod and admit no connection to ` +
        `the host API server (${where}): the syncer cannot sync, and its calls hang`;
      out.push(
        finding(
          "connection",
          { check: "network-policy", severity: "error", object: object(egress[0]!), message },
          `admit egress to ${where} (an ipBlock with the port) in a NetworkPolicy of ${s.namespace}`,
        ),
      );
    }
  }
  return out;
};

/** The host API server's addresses from the `kubernetes` Service's EndpointSlices (those not known unready). */
export function apiServerSliceAddresses(slices: readonly unknown[]): Array<{ ip: string; port: number }> {
  return slices.flatMap((slice) => {
    const s = slice as {
      endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean } }>;
      ports?: Array<{ port?: number }>;
    };
    const ports = (s.ports ?? []).flatMap((p) => (typeof p.port === "number" ? [p.port] : []));
    return (s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false)
      .flatMap((e) => (e.addresses ?? []).flatMap((ip) => ports.map((port) => ({ ip, port }))));
  });
}

/** The host API server's addresses from the `kubernetes` Endpoints. */
export function apiServerEndpoints(endpoints: unknown): Array<{ ip: string; port: number }> {
  const subsets =
    (
      endpoints as
        | { subsets?: Array<{ addresses?: Array<{ ip: string }>; ports?: Array<{ port: number }> }> }
        | undefined
    )?.subsets ?? [];
  return subsets.flatMap((ss) =>
    (ss.addresses ?? []).flatMap((a) => (ss.ports ?? []).map((p) => ({ ip: a.ip, port: p.port }))),
  );
}
