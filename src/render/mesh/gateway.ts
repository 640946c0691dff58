// Gateway spec translation: server hosts lose their namespace prefix, TLS secrets get their host names.
import { hostName } from "../../translate/index.js";
import { type Json, type MeshScope, isObject, mapArray } from "./refs.js";

/** `ns/host` (also `./host`, `*\/host`) becomes `host`: on the host every bound VirtualService is in one namespace. */
export function stripNamespacePrefix(host: unknown): unknown {
  if (typeof host !== "string") return host;
  const slash = host.indexOf("/");
  return slash < 0 ? host : host.slice(slash + 1);
}

function translateServer(server: unknown, scope: MeshScope): unknown {
  if (!isObject(server)) return server;
  const out: Json = { ...server };
  if ("hosts" in server) out.hosts = mapArray(server.hosts, stripNamespacePrefix);
  if (isObject(server.tls) && typeof server.tls.credentialName === "string" && server.tls.credentialName !== "") {
    out.tls = { ...server.tls, credentialName: hostName(server.tls.credentialName, scope.virtualNamespace, scope.cluster) };
  }
  return out;
}

export function translateGatewaySpec(spec: Json, scope: MeshScope): Json {
  const out: Json = { ...spec };
  if ("servers" in spec) out.servers = mapArray(spec.servers, (s) => translateServer(s, scope));
  return out;
}
