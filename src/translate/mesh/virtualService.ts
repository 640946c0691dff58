// VirtualService spec translation: hosts, route destinations, mirrors, gateways and delegates.
import { hostName } from "../index.js";
import {
  type Json,
  type MeshScope,
  OWN_NAMESPACE_ONLY,
  gatewayRef,
  isObject,
  mapArray,
  routeDestination,
  serviceHost,
} from "./refs.js";

function translateMatch(match: unknown, scope: MeshScope): unknown {
  if (!isObject(match) || !Array.isArray(match.gateways)) return match;
  return { ...match, gateways: match.gateways.map((g) => gatewayRef(g, scope)) };
}

/** One entry of `http[]`, `tcp[]` or `tls[]`. */
function translateRoute(route: unknown, scope: MeshScope): unknown {
  if (!isObject(route)) return route;
  const out: Json = { ...route };
  if ("match" in route) out.match = mapArray(route.match, (m) => translateMatch(m, scope));
  if ("route" in route) out.route = mapArray(route.route, (d) => routeDestination(d, scope));
  if (isObject(route.mirror)) out.mirror = { ...route.mirror, host: serviceHost(route.mirror.host, scope) };
  if ("mirrors" in route) out.mirrors = mapArray(route.mirrors, (m) => routeDestination(m, scope));
  if (isObject(route.delegate) && typeof route.delegate.name === "string") {
    const ns = typeof route.delegate.namespace === "string" ? route.delegate.namespace : scope.virtualNamespace;
    out.delegate = {
      ...route.delegate,
      name: hostName(route.delegate.name, ns, scope.cluster),
      namespace: scope.hostNamespace,
    };
  }
  return out;
}

export function translateVirtualServiceSpec(spec: Json, scope: MeshScope): Json {
  const out: Json = { ...spec };
  if ("hosts" in spec) out.hosts = mapArray(spec.hosts, (h) => serviceHost(h, scope));
  if ("gateways" in spec) out.gateways = mapArray(spec.gateways, (g) => gatewayRef(g, scope));
  for (const section of ["http", "tcp", "tls"] as const) {
    if (section in spec) out[section] = mapArray(spec[section], (r) => translateRoute(r, scope));
  }
  out.exportTo = [...OWN_NAMESPACE_ONLY];
  return out;
}
