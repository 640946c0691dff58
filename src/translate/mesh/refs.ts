// Reference rewriting shared by the mesh kinds: service hosts, gateway names, secret and object names.
import { LABELS, hostName, parseServiceHost, translateServiceHost } from "../index.js";

/** The reserved gateway name meaning "the sidecars of the mesh": never translated. */
const MESH_GATEWAY = "mesh";

/** Where a mesh object lives: its virtual namespace, its cluster and the host namespace it lands in. */
export interface MeshScope {
  cluster: string;
  virtualNamespace: string;
  hostNamespace: string;
  /** The cluster's namespaces (those its mesh manifests live in): `svc.ns` names a service only for these `ns`. */
  namespaces?: ReadonlySet<string>;
}

/**
 * `exportTo` of every VirtualService and DestinationRule on the host: the object's own namespace only (the
 * cluster's host namespace), whatever the manifest wrote, so no rule of a tenant applies to another tenant's traffic.
 */
export const OWN_NAMESPACE_ONLY = ["."];

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A service host (`svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local`, with or without a trailing dot) as its
 * host FQDN; others unchanged.
 */
export function serviceHost(host: unknown, scope: MeshScope): unknown {
  if (typeof host !== "string") return host;
  return translateServiceHost(host, scope.virtualNamespace, scope.cluster, scope.hostNamespace, scope.namespaces);
}

/**
 * A gateway reference of a VirtualService as the host gateway: `name` (same virtual namespace), `ns/name`
 * (`./name`: same namespace) and the legacy `name.ns.svc.cluster.local` become `<host namespace>/<host name>`;
 * `mesh` stays.
 */
export function gatewayRef(ref: unknown, scope: MeshScope): unknown {
  if (typeof ref !== "string" || ref === MESH_GATEWAY || ref === "") return ref;
  const slash = ref.indexOf("/");
  let name: string;
  let namespace: string;
  if (slash >= 0) {
    const ns = ref.slice(0, slash);
    namespace = ns === "" || ns === "." ? scope.virtualNamespace : ns;
    name = ref.slice(slash + 1);
  } else if (ref.includes(".")) {
    const parsed = parseServiceHost(ref, scope.virtualNamespace, scope.namespaces);
    if (!parsed) return ref;
    name = parsed.service;
    namespace = parsed.namespace;
  } else {
    name = ref;
    namespace = scope.virtualNamespace;
  }
  return `${scope.hostNamespace}/${hostName(name, namespace, scope.cluster)}`;
}

/** A route destination (`{destination: {host, ...}, weight}`) with its host translated. */
export function routeDestination(entry: unknown, scope: MeshScope): unknown {
  if (!isObject(entry) || !isObject(entry.destination)) return entry;
  return { ...entry, destination: { ...entry.destination, host: serviceHost(entry.destination.host, scope) } };
}

/** Subset labels scoped to this virtual cluster's pods by the ownership label. */
export function scopedLabels(labels: unknown, cluster: string): unknown {
  if (labels !== undefined && !isObject(labels)) return labels;
  return { ...labels, [LABELS.managedBy]: cluster };
}

/** Maps an array field when it is one; anything else stays as it is. */
export function mapArray(value: unknown, fn: (item: unknown) => unknown): unknown {
  return Array.isArray(value) ? value.map(fn) : value;
}
