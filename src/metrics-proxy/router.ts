// Maps a request path to the endpoint that answers it, with the verb and resource labels of the request metrics.
import * as discovery from "./discovery.js";
import * as h from "./handlers.js";
import { parseListQuery } from "./query.js";
import { parseRequestPath, type RequestPath } from "./request-path.js";
import type { ClusterScope } from "./scope.js";
import { ApiError } from "./status.js";
import { toTable, wantsTable } from "./table.js";

export interface Route {
  verb: string;
  group: string;
  resource: string;
  /** Produces the JSON body; throws ApiError for an error answer. */
  run(): unknown | Promise<unknown>;
  /** Discovery at /api and /apis: the items of its aggregated form (served when the Accept header asks for it). */
  aggregated?: () => unknown[];
}

export interface RouterContext extends h.HandlerContext {
  serverAddress: string;
}

const { METRICS_VERSION } = discovery;

function pathNotFound(path: string): ApiError {
  return new ApiError("NotFound", `the server could not find the requested resource (get ${path})`);
}

/**
 * The route of a GET to `path` with `params`, or a thrown 404 ApiError (400 for a path parseRequestPath refuses).
 * A string is read with parseRequestPath, the parser authorization uses. Health and Prometheus paths are handled by
 * the server before this.
 */
export function route(
  ctx: RouterContext,
  scope: ClusterScope,
  path: string | RequestPath,
  params: URLSearchParams,
  accept?: string,
): Route {
  const r = resolve(ctx, scope, typeof path === "string" ? parseRequestPath(path) : path, params);
  if (r.group !== ctx.apiGroup || !wantsTable(accept)) return r;
  const run = r.run;
  return { ...r, run: async () => toTable(await run()) };
}

function resolve(ctx: RouterContext, scope: ClusterScope, parsed: RequestPath, params: URLSearchParams): Route {
  const parts = parsed.segments;
  const path = parsed.path;
  const group = ctx.apiGroup;
  const doc = (run: () => unknown, aggregated?: () => unknown[]): Route => ({
    verb: "GET",
    group: "",
    resource: "discovery",
    run,
    ...(aggregated ? { aggregated } : {}),
  });

  if (parts[0] === "version" && parts.length === 1) return doc(discovery.version);
  if (parts[0] === "api") {
    if (parts.length === 1) return doc(() => discovery.apiVersions(ctx.serverAddress), discovery.aggregatedCore);
    if (parts[1] === "v1") {
      if (parts.length === 2) return doc(discovery.coreResources);
      if (parts[2] === "nodes" && parts.length === 3) {
        const filter = parseListQuery(params);
        return { verb: "LIST", group: "", resource: "nodes", run: () => h.listNodes(ctx, scope, filter) };
      }
      if (parts[2] === "nodes" && parts.length === 4) {
        return { verb: "GET", group: "", resource: "nodes", run: () => h.getNode(ctx, scope, parts[3]!) };
      }
      if (parts[2] === "pods" && parts.length === 3) {
        const filter = parseListQuery(params);
        return { verb: "LIST", group: "", resource: "pods", run: () => h.listPods(ctx, scope, undefined, filter) };
      }
      if (parts[2] === "namespaces" && parts[4] === "pods" && parts.length === 5) {
        const filter = parseListQuery(params);
        return { verb: "LIST", group: "", resource: "pods", run: () => h.listPods(ctx, scope, parts[3]!, filter) };
      }
      if (parts[2] === "namespaces" && parts[4] === "pods" && parts.length === 6) {
        return { verb: "GET", group: "", resource: "pods", run: () => h.getPod(ctx, scope, parts[3]!, parts[5]!) };
      }
    }
    throw pathNotFound(path);
  }
  if (parts[0] !== "apis") throw pathNotFound(path);
  if (parts.length === 1)
    return doc(
      () => discovery.apiGroupList(group),
      () => discovery.aggregatedGroups(group),
    );
  if (parts[1] !== group) throw pathNotFound(path);
  if (parts.length === 2) return doc(() => discovery.apiGroup(group));
  if (parts[2] !== METRICS_VERSION) throw pathNotFound(path);
  if (parts.length === 3) return doc(() => discovery.metricsResources(group));

  const rest = parts.slice(3);
  if (rest[0] === "pods" && rest.length === 1) {
    const filter = parseListQuery(params);
    return { verb: "LIST", group, resource: "pods", run: () => h.listPodMetrics(ctx, scope, undefined, filter) };
  }
  if (rest[0] === "namespaces" && rest.length >= 3 && rest[2] === "pods") {
    const ns = rest[1]!;
    if (rest.length === 3) {
      const filter = parseListQuery(params);
      return { verb: "LIST", group, resource: "pods", run: () => h.listPodMetrics(ctx, scope, ns, filter) };
    }
    if (rest.length === 4)
      return { verb: "GET", group, resource: "pods", run: () => h.getPodMetrics(ctx, scope, ns, rest[3]!) };
  }
  if (rest[0] === "nodes" && rest.length === 1) {
    const filter = parseListQuery(params);
    return { verb: "LIST", group, resource: "nodes", run: () => h.listNodeMetrics(ctx, scope, filter) };
  }
  if (rest[0] === "nodes" && rest.length === 2)
    return { verb: "GET", group, resource: "nodes", run: () => h.getNodeMetrics(ctx, scope, rest[1]!) };
  throw pathNotFound(path);
}
