// Doctor checks of synced mesh routing on the host: VirtualService destinations that name no Service, and hosts claimed
// twice.
import type { KubeObject } from "../../kube/object.js";
import { parseServiceHost } from "../../translate/index.js";
import { ANNOTATIONS } from "../../translate/keys.js";
import { finding } from "./coverage.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every service host a VirtualService sends traffic to: route destinations and mirrors of http, tcp and tls routes. */
export function destinationHosts(vs: KubeObject): string[] {
  const spec = isObject(vs.spec) ? vs.spec : {};
  const hosts: string[] = [];
  const add = (d: unknown) => {
    if (isObject(d) && typeof d.host === "string") hosts.push(d.host);
  };
  for (const section of ["http", "tcp", "tls"]) {
    for (const route of list(spec[section])) {
      if (!isObject(route)) continue;
      for (const r of list(route.route)) if (isObject(r)) add(r.destination);
      add(route.mirror);
      for (const m of list(route.mirrors)) if (isObject(m)) add(m.destination);
    }
  }
  return [...new Set(hosts)];
}

/**
 * The namespaces a cluster's mesh objects on the host use, as the renderer's host rule reads them (classifyHost in
 * translate/names.ts): the host namespace, and the virtual namespace each object was rendered from (its
 * object-namespace annotation). `svc.ns` names a Service only when `ns` is one of them; `example.com` is an external
 * host.
 */
export function meshNamespacesOnHost(hostNamespace: string, objects: readonly KubeObject[]): Set<string> {
  const out = new Set([hostNamespace]);
  for (const o of objects) {
    const virtual = o.metadata.annotations?.[ANNOTATIONS.objectNamespace];
    out.add(typeof virtual === "string" && virtual !== "" ? virtual : (o.metadata.namespace ?? hostNamespace));
  }
  return out;
}

/** The namespaces of the snapshot's mesh objects (see meshNamespacesOnHost). */
export function snapshotMeshNamespaces(
  s: Pick<HostSnapshot, "namespace" | "virtualServices" | "destinationRules" | "gateways">,
): Set<string> {
  return meshNamespacesOnHost(s.namespace, [...s.virtualServices, ...s.destinationRules, ...s.gateways]);
}

/**
 * The Service (`namespace/name`) a mesh host names from `namespace`, or undefined for an external host; `namespaces`
 * (meshNamespacesOnHost) decides whether a two-label `svc.ns` is a service or an external name such as `example.com`.
 */
export function serviceRef(host: string, namespace: string, namespaces: ReadonlySet<string>): string | undefined {
  const ref = parseServiceHost(host, namespace, namespaces);
  return ref ? `${ref.namespace}/${ref.service}` : undefined;
}

/** For a translated host name `<name>-x-<namespace>-x-<cluster>`, the virtual service it stands for. */
function virtualOrigin(name: string, cluster: string): string | undefined {
  const suffix = `-x-${cluster}`;
  if (!name.endsWith(suffix)) return undefined;
  const rest = name.slice(0, -suffix.length);
  const at = rest.lastIndexOf("-x-");
  return at > 0 ? `${rest.slice(0, at)} in namespace ${rest.slice(at + 3)}` : undefined;
}

/** A synced VirtualService routes to a Service that does not exist on the host (the mesh drops such routes). */
export const meshDestinations: Check = (s) => {
  if (s.unreadable?.services || s.unreadable?.mesh) return [];
  const existing = new Set(s.services.map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
  const namespaces = snapshotMeshNamespaces(s);
  const out: Finding[] = [];
  for (const vs of s.virtualServices) {
    const ns = vs.metadata.namespace ?? s.namespace;
    for (const host of destinationHosts(vs)) {
      const ref = serviceRef(host, ns, namespaces);
      if (!ref || existing.has(ref)) continue;
      const name = ref.slice(ref.indexOf("/") + 1);
      const origin = virtualOrigin(name, s.cluster);
      const message =
        `route destination ${host} names Service ${ref}, which does not exist on the ` +
        `host${origin ? ` (the virtual cluster's service ${origin}: not synced)` : ""}`;
      const how = origin
        ? "create the service in the virtual cluster and keep sync.toHost.services enabled, or fix the route's " +
          "destination.host"
        : "create the Service or fix the route's destination.host";
      out.push(
        finding(
          "mesh-not-effective",
          { check: "mesh-destination", severity: "error", object: `VirtualService ${ns}/${vs.metadata.name}`, message },
          how,
        ),
      );
    }
  }
  return out;
};

/** Names of objects by the host key they claim; keys claimed by more than one object are conflicts. */
function conflicts(claims: Array<[key: string, name: string]>): Array<[string, string[]]> {
  const by = new Map<string, Set<string>>();
  for (const [key, name] of claims) by.set(key, (by.get(key) ?? new Set()).add(name));
  return [...by]
    .filter(([, names]) => names.size > 1)
    .map(([key, names]) => [key, [...names].sort()] as [string, string[]])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/**
 * Two DestinationRules for one host, or two VirtualServices binding one host on one gateway: the mesh applies only one.
 */
export const meshHostConflicts: Check = (s) => {
  if (s.unreadable?.mesh) return [];
  const namespaces = snapshotMeshNamespaces(s);
  const key = (host: string, ns: string) => serviceRef(host, ns, namespaces) ?? host;
  const rules: Array<[string, string]> = s.destinationRules.flatMap((dr) => {
    const host = isObject(dr.spec) && typeof dr.spec.host === "string" ? dr.spec.host : undefined;
    return host ? [[key(host, dr.metadata.namespace ?? s.namespace), dr.metadata.name] as [string, string]] : [];
  });
  const routes: Array<[string, string]> = s.virtualServices.flatMap((vs) => {
    const spec = isObject(vs.spec) ? vs.spec : {};
    const ns = vs.metadata.namespace ?? s.namespace;
    const gateways = list(spec.gateways).filter((g): g is string => typeof g === "string");
    return list(spec.hosts)
      .filter((h): h is string => typeof h === "string")
      .flatMap((h) =>
        (gateways.length ? gateways : ["mesh"]).map(
          (g) => [`${key(h, ns)} on gateway ${g}`, vs.metadata.name] as [string, string],
        ),
      );
  });
  const out: Finding[] = [];
  for (const [kind, claims] of [
    ["DestinationRule", rules],
    ["VirtualService", routes],
  ] as const) {
    for (const [host, objects] of conflicts(claims)) {
      const message =
        `${objects.length} ${kind}s claim host ${host}: ${objects.join(", ")}; the mesh applies only ` + `one of them`;
      out.push(
        finding(
          "mesh-not-effective",
          { check: "mesh-host-conflict", severity: "warning", object: `${kind} ${s.namespace}/${objects[0]}`, message },
          "merge them into one, or give each its own host",
        ),
      );
    }
  }
  return out;
};
