// The HTTP request handler: faults, authentication, request log, then discovery, metrics, logs and object verbs.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KubeObject } from "../../../src/kube/object.js";
import type { Auth, User } from "./auth.js";
import { isMetricsGroup, servedByPlural, type Served } from "./catalog.js";
import {
  aggregatedDiscovery,
  AGGREGATED_CONTENT_TYPE,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
  type Serves,
} from "./discovery.js";
import { checkEscalation } from "./escalation.js";
import type { Faults } from "./faults.js";
import {
  parseBody,
  readBody,
  readRaw,
  requestUrl,
  sendError,
  sendJson,
  sendText,
  wantsAggregatedDiscovery,
  partialMetadata,
  wantsMetadataOnly,
  wantsTable,
} from "./http.js";
import type { PodLogs } from "./logs.js";
import { defaultManager } from "./managed.js";
import type { MetricsApi } from "./metrics-api.js";
import type { Objects, WriteOptions } from "./objects.js";
import type { OpenApi } from "./openapi.js";
import { decodeProtobuf } from "./protobuf.js";
import type { RequestLog, LoggedRequest } from "./request-log.js";
import { requestInfo, type RequestInfo } from "./router.js";
import { accessReview, selfReview, subjectAccessReview, tokenReview } from "./review.js";
import { scaleOf, writeScale } from "./scale.js";
import type { ServerMetrics } from "./server-metrics.js";
import { ApiError, badRequest, REASONS, successStatus } from "./status.js";
import { jsonOf, type Store } from "./store.js";
import { toTable } from "./table.js";
import { startWatch } from "./watch.js";
import { methodNotAllowed } from "./validate.js";
import { FACTS, validateFields, warningHeader, type Profile } from "./profile.js";

export interface HandlerDeps {
  store: Store;
  objects: Objects;
  auth: Auth;
  faults: Faults;
  log: RequestLog;
  metrics: MetricsApi;
  logs: PodLogs;
  openapi: OpenApi;
  serverMetrics: ServerMetrics;
  hostPort: () => string;
  /** API groups not served (as on a host without those CRDs installed): absent from discovery, their paths 404. */
  unserved: ReadonlySet<string>;
  /** Whether TokenReviews are answered (else 404). */
  tokenReviews: boolean;
  /** Open watch streams, ended on close. */
  watches: Set<() => void>;
  /** The release answered as (profile.ts). */
  profile: Profile;
}

const RBAC_V1 = "rbac.authorization.k8s.io/v1";
/** The reviews every authenticated user may create about itself. */
const SELF_REVIEWS = new Set(["SelfSubjectAccessReview", "SelfSubjectReview"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      const e =
        err instanceof ApiError
          ? err
          : new ApiError(500, `Internal error occurred: ${(err as Error)?.message ?? String(err)}`, "InternalError");
      if (!res.headersSent) sendError(res, e);
      else res.end();
    });
  };
}

async function handle(deps: HandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req.url);
  const method = (req.method ?? "GET").toUpperCase();
  const entry: LoggedRequest = {
    method,
    path: url.pathname,
    query: url.search.replace(/^\?/, ""),
    status: 0,
    verb: method.toLowerCase(),
  };
  if (req.headers["user-agent"]) entry.userAgent = req.headers["user-agent"];
  deps.log.add(entry);
  const started = process.hrtime.bigint();
  let group = "";
  res.on("finish", () => {
    entry.status = res.statusCode;
    if (entry.resource) deps.serverMetrics.observe(entry, group, Number(process.hrtime.bigint() - started) / 1e9);
  });
  const info = requestInfo(method, url.pathname, url.searchParams);
  group = info.group;
  entry.verb = info.verb;
  if (info.resource) entry.resource = info.resource;
  if (info.subresource) entry.subresource = info.subresource;
  if (info.namespace) entry.namespace = info.namespace;
  if (info.name) entry.name = info.name;

  for (const fault of deps.faults.match(method, url.pathname)) {
    if (fault.warning !== undefined) res.appendHeader("Warning", warningHeader(fault.warning));
    if (fault.latencyMs) await sleep(fault.latencyMs);
    if (fault.reset) {
      entry.status = 0;
      req.socket.destroy();
      return;
    }
    if (fault.status !== undefined) {
      const headers: Record<string, string> = {};
      if (fault.retryAfterSeconds !== undefined) headers["Retry-After"] = String(fault.retryAfterSeconds);
      if (fault.body !== undefined) {
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
        sendText(res, fault.status, fault.body, "application/json");
        return;
      }
      const message =
        fault.status === 429
          ? "Too many requests, please try again later."
          : `injected fault: ${REASONS[fault.status] ?? fault.status}`;
      const details =
        fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined;
      sendError(res, new ApiError(fault.status, message, REASONS[fault.status] ?? "Unknown", details), headers);
      return;
    }
  }

  const user = impersonated(deps, deps.auth.authenticate(req.headers.authorization), req, info);
  entry.user = user.name;
  if (!info.isResource) return serveNonResource(deps, req, res, url.pathname);
  await serveResource(deps, req, res, info, url.searchParams, user);
}

/**
 * With an Impersonate-User header, the request acts as that user, if the caller may impersonate it (else 403). 1.20
 * names the refused impersonation (users "x"); 1.36 (constrained impersonation) names the request it would have made.
 */
function impersonated(deps: HandlerDeps, user: User, req: IncomingMessage, info: RequestInfo): User {
  const auth = deps.auth;
  const target = req.headers["impersonate-user"];
  if (typeof target !== "string" || target === "") return user;
  if (
    deps.profile === "1.20" ||
    auth.allowed(user, { verb: "impersonate", group: "", resource: "users", name: target })
  ) {
    auth.authorize(user, { verb: "impersonate", group: "", resource: "users", name: target });
    return auth.byName(target);
  }
  const resource = info.resource ?? "";
  const scope = info.namespace !== undefined ? `in the namespace "${info.namespace}"` : "at the cluster scope";
  throw new ApiError(
    403,
    `${resource} is forbidden: User "${user.name}" cannot impersonate-on:user-info:${info.verb} resource ` +
      `"${resource}" in API group "${info.group}" ${scope}`,
    "Forbidden",
    { kind: resource, ...(info.group ? { group: info.group } : {}) },
  );
}

function serving(deps: HandlerDeps): Serves {
  const selfReview = FACTS[deps.profile].selfSubjectReview;
  return (group) =>
    !deps.unserved.has(group) &&
    (deps.metrics.available || !isMetricsGroup(group)) &&
    (selfReview || group !== SELF_REVIEW_GROUP);
}

/**
 * The group of SelfSubjectReview (absent before 1.28) and TokenReview: listed in discovery only where SelfSubjectReview
 * is served; a TokenReview, which every release serves, is answered on either profile.
 */
const SELF_REVIEW_GROUP = "authentication.k8s.io";

/**
 * Whether an Accept header takes the legacy discovery document: no header, `*\/*`, or application/json without a
 * transformation. An aggregated-only Accept on a server without aggregated discovery is a 406, as the API server says.
 */
function acceptsLegacy(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(",").some((c) => {
    const [type = "", ...params] = c.split(";").map((x) => x.trim());
    if (params.some((p) => /^q=0(\.0*)?$/.test(p))) return false;
    return (
      (type === "*/*" || type === "application/*" || type === "application/json") &&
      !params.some((p) => /^(as|g|v)=/.test(p))
    );
  });
}

function discovery(
  deps: HandlerDeps,
  res: ServerResponse,
  accept: string | undefined,
  aggregated: () => unknown,
  legacy: () => unknown,
): void {
  if (FACTS[deps.profile].aggregatedDiscovery && wantsAggregatedDiscovery(accept))
    return sendJson(res, 200, aggregated(), AGGREGATED_CONTENT_TYPE);
  if (!acceptsLegacy(accept))
    throw new ApiError(
      406,
      "only the following media types are accepted: application/json, application/yaml, " +
        "application/vnd.kubernetes.protobuf",
      "NotAcceptable",
    );
  return sendJson(res, 200, legacy());
}

async function serveNonResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const p = path.replace(/\/+$/, "") || "/";
  const accept = req.headers.accept;
  const metricsOn = deps.metrics.available;
  const serves = serving(deps);
  if (p === "/version") return sendJson(res, 200, versionInfo(deps.profile));
  if (p === "/healthz" || p === "/livez" || p === "/readyz") return sendText(res, 200, "ok");
  if (p === "/metrics") return sendText(res, 200, await deps.serverMetrics.text(), deps.serverMetrics.contentType);
  if (p === "/api")
    return discovery(
      deps,
      res,
      accept,
      () => aggregatedDiscovery(true, serves),
      () => apiVersions(deps.hostPort()),
    );
  if (p === "/apis")
    return discovery(
      deps,
      res,
      accept,
      () => aggregatedDiscovery(false, serves),
      () => apiGroupList(serves),
    );
  const parts = p.split("/").filter(Boolean);
  if (parts[0] === "api" && parts.length === 2) {
    const doc = apiResourceList("", parts[1]!, serves);
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts[0] === "apis" && parts.length === 2) {
    const doc = apiGroup(parts[1]!, serves);
    if (doc) return sendJson(res, 200, doc);
  }
  if (parts[0] === "apis" && parts.length === 3) {
    const doc = apiResourceList(parts[1]!, parts[2]!, serves);
    if (doc) return sendJson(res, 200, doc);
    if (!metricsOn && isMetricsGroup(parts[1]!))
      throw new ApiError(503, "the server is currently unable to handle the request", "ServiceUnavailable");
  }
  // OpenAPI v3 is served from 1.23 (beta 1.24): 1.20 answers 404, and kubectl falls back to v2.
  if (parts[0] === "openapi" && (parts[1] !== "v3" || FACTS[deps.profile].openApiV3)) {
    const doc = deps.openapi.serve(p);
    if (doc !== undefined) {
      const contentType = p === "/openapi/v2" ? FACTS[deps.profile].openApiV2ContentType : doc.contentType;
      res.writeHead(200, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(doc.body) });
      res.end(doc.body);
      return;
    }
  }
  throw new ApiError(404, "the server could not find the requested resource", "NotFound");
}

/**
 * A create/update body: JSON or YAML, or protobuf for the simple kinds typed kubectl commands (`kubectl create ns`)
 * send.
 */
async function readObject(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase();
  if (type === "application/vnd.kubernetes.protobuf") return decodeProtobuf(await readRaw(req));
  if (type.includes("protobuf") || type.includes("cbor")) {
    throw new ApiError(
      415,
      `the test server accepts application/json and application/yaml bodies, not ${type}`,
      "UnsupportedMediaType",
    );
  }
  return parseBody(await readBody(req), type.includes("yaml"));
}

function listMeta(rv: string, cont?: string, remaining?: number): Record<string, unknown> {
  const m: Record<string, unknown> = { resourceVersion: rv };
  if (cont) m.continue = cont;
  if (remaining !== undefined) m.remainingItemCount = remaining;
  return m;
}

function writeOptions(req: IncomingMessage, query: URLSearchParams): WriteOptions {
  const dryRun = query.getAll("dryRun");
  if (dryRun.some((d) => d !== "All"))
    throw badRequest(`Invalid dryRun value: ${dryRun.join(",")}; only "All" is supported`);
  return { manager: defaultManager(query.get("fieldManager"), req.headers["user-agent"]), dryRun: dryRun.length > 0 };
}

async function serveResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  query: URLSearchParams,
  user: User,
): Promise<void> {
  const served = servedByPlural(info.group, info.version, info.resource ?? "");
  if (
    !served ||
    deps.unserved.has(served.group) ||
    (served.kind === "SelfSubjectReview" && !FACTS[deps.profile].selfSubjectReview) ||
    (served.kind === "TokenReview" && !deps.tokenReviews)
  )
    throw new ApiError(404, "the server could not find the requested resource", "NotFound");
  if (isMetricsGroup(served.group) && !deps.metrics.available)
    throw new ApiError(503, "the server is currently unable to handle the request", "ServiceUnavailable");
  const ns = served.namespaced ? info.namespace : undefined;
  // Every authenticated user may review its own access (upstream's system:basic-user role); reviews of others need
  // `create` on them.
  if (!SELF_REVIEWS.has(served.kind))
    deps.auth.authorize(user, {
      verb: info.verb,
      group: served.group,
      resource: served.plural,
      subresource: info.subresource,
      namespace: ns,
      name: info.name,
    });
  const method = (req.method ?? "GET").toUpperCase();
  const admit = (obj: KubeObject) =>
    checkEscalation(
      deps.auth,
      user,
      served,
      obj,
      (kind, namespace, name) => {
        const role = deps.store.get(`${RBAC_V1}/${kind}`, namespace ?? "", name)?.obj as { rules?: [] } | undefined;
        return role ? (role.rules ?? []) : undefined;
      },
      FACTS[deps.profile].missingRoleNames,
    );

  if (served.createOnly) {
    if (info.verb !== "create" || info.name !== undefined) throw methodNotAllowed(served, info.verb);
    const body = await readObject(req);
    if (served.kind === "SelfSubjectReview") return sendJson(res, 201, selfReview(user));
    if (served.kind === "TokenReview") return sendJson(res, 201, tokenReview(deps.auth, body));
    if (served.kind === "SelfSubjectAccessReview") return sendJson(res, 201, accessReview(deps.auth, user, body));
    return sendJson(res, 201, subjectAccessReview(deps.auth, deps.store, served.kind, body, ns));
  }
  if (served.readOnly) {
    if (info.verb !== "get" && info.verb !== "list") throw methodNotAllowed(served, info.verb);
    return sendJson(res, 200, deps.metrics.serve(served, info.verb, ns, info.name, query));
  }

  const sub = info.subresource;
  if (sub !== undefined && !(served.subresources ?? []).includes(sub as never))
    throw new ApiError(404, "the server could not find the requested resource", "NotFound");
  if (sub === "log") {
    if (info.verb !== "get") throw methodNotAllowed(served, info.verb);
    return sendText(res, 200, deps.logs.read(ns ?? "", info.name!, query));
  }
  if (sub === "scale") {
    if (info.verb === "get") return sendJson(res, 200, scaleOf(deps.objects.get(served, ns, info.name!).obj));
    if (method !== "PUT" && method !== "PATCH") throw methodNotAllowed(served, info.verb);
    const text = await readBody(req);
    return sendJson(
      res,
      200,
      writeScale(
        deps.objects,
        served,
        ns,
        info.name!,
        method,
        req.headers["content-type"] ?? "",
        text,
        writeOptions(req, query),
      ),
    );
  }

  switch (info.verb) {
    case "get": {
      const e = deps.objects.get(served, ns, info.name!);
      if (wantsTable(req.headers.accept))
        return sendJson(
          res,
          200,
          toTable(served, [e.obj], { resourceVersion: e.obj.metadata.resourceVersion }, query.get("includeObject")),
        );
      if (sub === undefined && wantsMetadataOnly(req.headers.accept)) return sendJson(res, 200, partialMetadata(e.obj));
      return sendJson(res, 200, sub === undefined ? jsonOf(e) : e.obj);
    }
    case "list":
      return serveList(deps, req, res, served, ns, query);
    case "watch": {
      const table = wantsTable(req.headers.accept);
      const metadataOnly = !table && wantsMetadataOnly(req.headers.accept);
      const include = query.get("includeObject");
      const stop = startWatch(deps.store, res, {
        served,
        namespace: ns,
        query,
        wire: (o, first) =>
          table
            ? toTable(served, [o], { resourceVersion: o.metadata.resourceVersion }, include, first)
            : metadataOnly
              ? partialMetadata(o)
              : o,
      });
      deps.watches.add(stop);
      res.on("close", () => deps.watches.delete(stop));
      return;
    }
    case "create": {
      if (info.name !== undefined || (served.namespaced && ns === undefined)) throw methodNotAllowed(served, "create");
      const opts = { ...writeOptions(req, query), admit };
      const body = await readObject(req);
      fieldValidation(deps, res, served, body, query);
      return sendJson(res, 201, deps.objects.create(served, ns, body, opts));
    }
    case "update": {
      const opts = { ...writeOptions(req, query), subresource: sub, admit };
      const body = await readObject(req);
      fieldValidation(deps, res, served, body, query);
      return sendJson(res, 200, deps.objects.update(served, ns, info.name!, body, opts));
    }
    case "patch": {
      const opts = {
        ...writeOptions(req, query),
        subresource: sub,
        force: query.get("force") === "true",
        fieldManager: query.get("fieldManager"),
        admit,
      };
      const text = validatedPatch(deps, res, served, req.headers["content-type"] ?? "", await readBody(req), query);
      const { obj, created } = deps.objects.patch(
        served,
        ns,
        info.name!,
        req.headers["content-type"] ?? "",
        text,
        opts,
      );
      return sendJson(res, created ? 201 : 200, obj);
    }
    case "delete": {
      const text = await readBody(req);
      const body = (text.trim() ? parseBody(text) : {}) as {
        propagationPolicy?: string;
        dryRun?: string[];
        preconditions?: { uid?: string; resourceVersion?: string };
        orphanDependents?: boolean;
      };
      const policy =
        query.get("propagationPolicy") ?? body.propagationPolicy ?? (body.orphanDependents ? "Orphan" : undefined);
      const dryRun = writeOptions(req, query).dryRun || (body.dryRun ?? []).includes("All");
      const deleted = deps.objects.delete(served, ns, info.name!, {
        propagationPolicy: policy,
        dryRun,
        preconditions: body.preconditions,
      });
      if (served.kind === "Namespace" || served.kind === "Pod") return sendJson(res, 200, deleted);
      return sendJson(
        res,
        200,
        successStatus({
          name: deleted.metadata.name,
          group: served.group,
          kind: served.plural,
          uid: String(deleted.metadata.uid),
        }),
      );
    }
    case "deletecollection": {
      const dryRun = writeOptions(req, query).dryRun;
      const { entries } = deps.objects.list(served, ns, query);
      const deleted: KubeObject[] = [];
      for (const e of entries) {
        if (!deps.store.get(e.kindKey, e.obj.metadata.namespace ?? "", e.obj.metadata.name)) continue;
        deleted.push(
          deps.objects.delete(served, e.obj.metadata.namespace, e.obj.metadata.name, {
            propagationPolicy: query.get("propagationPolicy") ?? undefined,
            dryRun,
          }),
        );
      }
      return sendJson(res, 200, {
        kind: served.listKind,
        apiVersion: served.apiVersion,
        metadata: { resourceVersion: String(deps.store.resourceVersion) },
        items: deleted,
      });
    }
    default:
      throw methodNotAllowed(served, info.verb);
  }
}

/**
 * Server-side field validation of a write body (current profile; 1.20 ignores `fieldValidation`); warnings become
 * headers.
 */
function fieldValidation(
  deps: HandlerDeps,
  res: ServerResponse,
  served: Served,
  body: unknown,
  query: URLSearchParams,
): void {
  // 1.20 ignores the parameter and drops unknown fields without a word.
  if (!FACTS[deps.profile].fieldValidation) return void validateFields(served, body, "Ignore");
  const mode = query.get("fieldValidation");
  if (mode !== null && !["Ignore", "Warn", "Strict"].includes(mode))
    throw badRequest(`Invalid fieldValidation value: ${mode}; must be one of Ignore, Warn, Strict`);
  const warnings = validateFields(served, body, mode);
  for (const w of warnings) res.appendHeader("Warning", warningHeader(w));
}

/** A patch body with its unknown fields validated (apply and merge patches: whole objects or parts of one). */
function validatedPatch(
  deps: HandlerDeps,
  res: ServerResponse,
  served: Served,
  contentType: string,
  text: string,
  query: URLSearchParams,
): string {
  if (/json-patch/.test(contentType)) return text;
  let body: unknown;
  try {
    body = parseBody(text, /yaml/.test(contentType));
  } catch {
    return text; // the patch step answers a malformed body
  }
  const before = JSON.stringify(body);
  fieldValidation(deps, res, served, body, query);
  return JSON.stringify(body) === before ? text : JSON.stringify(body);
}

function serveList(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  served: Served,
  ns: string | undefined,
  query: URLSearchParams,
): void {
  const result = deps.objects.list(served, ns, query);
  const meta = listMeta(result.resourceVersion, result.continue, result.remainingItemCount);
  if (wantsTable(req.headers.accept)) {
    return sendJson(
      res,
      200,
      toTable(
        served,
        result.entries.map((e) => e.obj),
        meta,
        query.get("includeObject"),
      ),
    );
  }
  if (wantsMetadataOnly(req.headers.accept)) {
    return sendJson(res, 200, {
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: meta,
      items: result.entries.map((e) => partialMetadata(e.obj)),
    });
  }
  // Serialise each stored object once (cached on the entry) and splice the strings together.
  const head = `{"kind":${JSON.stringify(served.listKind)},"apiVersion":${JSON.stringify(served.apiVersion)},"metadata":${JSON.stringify(meta)},"items":[`;
  const body = `${head + result.entries.map(jsonOf).join(",")}]}`;
  sendText(res, 200, body, "application/json");
}
