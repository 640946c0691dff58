// Gateway spec translation: server hosts bound to the cluster's host namespace, TLS secrets get their host names.
import { hostSecretName } from "../index.js";
import { type Json, type MeshScope, isObject, mapArray } from "./refs.js";

/**
 * A server host as the mesh reads it on the host: `<host namespace>/<dns name>`, whatever the manifest wrote
 * (`a.example.com`, which the mesh reads as `*\/a.example.com`, `web/b.example.com`, `./c.example.com`,
 * `*\/d.example.com`). Only VirtualServices in the cluster's own host namespace may then bind to the
 * Gateway: a host form open to any namespace would let another tenant's VirtualService claim its hosts.
 */
function tenantBoundHost(host: unknown, hostNamespace: string): unknown {
  if (typeof host !== "string") return host;
  const slash = host.indexOf("/");
  return `${hostNamespace}/${slash < 0 ? host : host.slice(slash + 1)}`;
}

function translateServer(server: unknown, scope: MeshScope): unknown {
  if (!isObject(server)) return server;
  const out: Json = { ...server };
  if ("hosts" in server) out.hosts = mapArray(server.hosts, (h) => tenantBoundHost(h, scope.hostNamespace));
  if (isObject(server.tls) && typeof server.tls.credentialName === "string" && server.tls.credentialName !== "") {
    out.tls = {
      ...server.tls,
      credentialName: hostSecretName(server.tls.credentialName, scope.virtualNamespace, scope.cluster),
    };
  }
  return out;
}

export function translateGatewaySpec(spec: Json, scope: MeshScope): Json {
  const out: Json = { ...spec };
  if ("servers" in spec) out.servers = mapArray(spec.servers, (s) => translateServer(s, scope));
  return out;
}
