// Parses a request path and method into Kubernetes request info (verb, group, version, namespace, resource, name,
// subresource).
import { badRequest } from "./status.js";

export interface RequestInfo {
  isResource: boolean;
  verb: string;
  path: string;
  group: string;
  version: string;
  namespace?: string;
  resource?: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const nonResource: RequestInfo = { isResource: false, verb: method.toLowerCase(), path, group: "", version: "" };
  let parts: string[];
  try {
    parts = path
      .split("/")
      .filter((p) => p !== "")
      .map(decodeURIComponent);
  } catch {
    throw badRequest(`malformed URL path: ${path}`);
  }
  let rest: string[];
  let group = "";
  let version: string;
  if (parts[0] === "api" && parts.length >= 3) {
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return nonResource;
  const info: RequestInfo = { isResource: true, verb: "", path, group, version };
  if (rest[0] === "namespaces" && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  info.resource = rest[0];
  if (rest.length > 1) info.name = rest[1];
  if (rest.length > 2) info.subresource = rest[2];
  if (rest.length > 3) return { ...nonResource, isResource: false };
  // "namespaces/<name>" is the namespace object itself, not a namespace scope.
  if (info.resource === "namespaces" && info.namespace !== undefined && rest[0] === "namespaces") {
    info.name = info.namespace;
    delete info.namespace;
    if (rest.length > 2) info.subresource = rest[2];
  }
  const m = method.toUpperCase();
  if (m === "GET" || m === "HEAD")
    info.verb = info.name ? "get" : query.get("watch") === "true" || query.get("watch") === "1" ? "watch" : "list";
  else if (m === "POST") info.verb = "create";
  else if (m === "PUT") info.verb = "update";
  else if (m === "PATCH") info.verb = "patch";
  else if (m === "DELETE") info.verb = info.name ? "delete" : "deletecollection";
  else info.verb = m.toLowerCase();
  if (info.verb === "get" && (query.get("watch") === "true" || query.get("watch") === "1")) info.verb = "watch";
  return info;
}
