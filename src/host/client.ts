// A small Kubernetes API client over node-fetch and the kubeconfig's transport: raw JSON in and out, retries in one
// place.
import http from "node:http";
import https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import fetch, { Headers } from "node-fetch";
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { apiVersionOf, resourceFor, resourcePath, type ResourceType } from "../kube/resources.js";
import { FIELD_MANAGER } from "../translate/keys.js";
import { hostContextOf, missingKubeconfig } from "./kubeconfig-file.js";
import {
  DEFAULT_RETRY,
  isRetryableStatus,
  isTransientNetworkError,
  parseRetryAfter,
  retryDelay,
  sleep,
  type RetryPolicy,
} from "../util/retry.js";
import { UserError } from "../model/errors.js";
import pLimit from "p-limit";
import { requestBudget, type RequestBudget } from "./budget.js";
import { parseWarningHeaders, tellWarnings, WarningTeller, type WarningSink } from "./warnings.js";

export type { RequestBudget } from "./budget.js";

/**
 * What vc says of each cause `reason` of a Status (metav1.CauseType); the server's own wording changes between
 * releases.
 */
const CAUSE_WORDS: Record<string, string> = {
  FieldValueInvalid: "invalid value",
  FieldValueForbidden: "may not be set or changed",
  FieldValueRequired: "required",
  FieldValueNotFound: "not found",
  FieldValueDuplicate: "duplicate value",
  FieldValueTooLong: "too long",
  FieldValueTooMany: "too many items",
  FieldValueNotSupported: "value not supported",
  FieldValueTypeInvalid: "wrong type",
  FieldManagerConflict: "owned by another field manager",
  UnexpectedServerResponse: "unexpected server response",
  ResourceVersionTooLarge: "resourceVersion too large",
};

/**
 * The message of a refusal, built from its fields: the status code, the reason and each cause's field and type in vc's
 * words, then the server's own message for the detail (it may change from release to release; nothing parses it).
 */
export function refusalMessage(status: number, statusText: string, body: unknown): string {
  const b =
    body && typeof body === "object"
      ? (body as {
          message?: unknown;
          reason?: unknown;
          details?: { causes?: Array<{ field?: string; reason?: string }> };
        })
      : {};
  const serverSaid = typeof b.message === "string" ? b.message : "";
  const reason = typeof b.reason === "string" && b.reason ? b.reason : statusText;
  const causes = (b.details?.causes ?? []).filter((c) => c.field || c.reason);
  if (causes.length === 0) return `${status} ${serverSaid || reason}`;
  const fields = causes
    .map((c) => `${c.field || "(the object)"}: ${(c.reason && CAUSE_WORDS[c.reason]) ?? c.reason ?? "refused"}`)
    .join("; ");
  return `${status} ${reason}: ${fields}${serverSaid ? ` (the server said: ${serverSaid})` : ""}`;
}

/** An answer of the API server other than 2xx (after retries); its message is `refusalMessage`. */
export class KubeApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly reason: string,
    readonly body: unknown,
  ) {
    super(`${method} ${path}: ${refusalMessage(status, reason, body)}`);
  }

  /** The `details.causes` of the refusal as `field reason` (what tests and checks decide by). */
  get causes(): Array<{ field: string; reason: string }> {
    const causes =
      (this.body as { details?: { causes?: Array<{ field?: string; reason?: string }> } } | undefined)?.details
        ?.causes ?? [];
    return causes.map((c) => ({ field: c.field ?? "", reason: c.reason ?? "" }));
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Content-Type of the body (default application/json). */
  contentType?: string;
  /** Retry a 409 too (server-side apply with force: a conflict is a race, resending is safe). */
  retryConflict?: boolean;
  /** `text` returns the body as it came (pod logs); default: parsed JSON. */
  response?: "json" | "text";
  /**
   * The answer's body is read up to this many bytes; a longer one is cut off and ResponseTooLarge thrown (no retry).
   */
  maxBytes?: number;
  /** Accept header (a metadata-only LIST asks for PartialObjectMetadataList); default application/json (text: any). */
  accept?: string;
  /**
   * A write fenced in time: no attempt (first or retry) is sent at or after this moment (epoch ms), and one in flight
   * is cut off then (FencedWriteError): a reconciler past its Lease's renew deadline writes nothing more.
   */
  fence?: () => number;
}

/** An answer longer than the request's `maxBytes`: its body was cut off where it passed the bound. */
export class ResponseTooLarge extends Error {
  constructor(
    readonly path: string,
    readonly maxBytes: number,
  ) {
    super(`the answer to GET ${path} is longer than ${maxBytes} bytes`);
  }
}

/** A fenced write was not sent: its writer's time to write (a Lease, an apply lease) ran out before it could be. */
class FencedWriteError extends Error {}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` tokens (default 5000). */
  limit?: number;
  /**
   * Served from the API server's watch cache (`resourceVersion=0`: what it has seen, at most moments behind its store,
   * in one page) instead of a read of its store: a selected LIST of a kind then costs the server a filter of what it
   * holds in memory, not decoding every object of the kind. For the objects vc plans on (each write carries the
   * resourceVersion it was planned against), never for vc's records.
   */
  fromCache?: boolean;
  /** Bytes each page's answer may hold; a longer one throws ResponseTooLarge (lists of what a tenant may write). */
  maxBytes?: number;
}

/** Objects a mapped LIST (listMapped) asks for per page: each page is reduced before the next is asked for. */
export const MAPPED_PAGE = 500;

export interface ClientStats {
  requests: number;
  retries: number;
}

/**
 * Connections a client keeps to its server, and its requests in flight: the others wait for one (KubeClient.inFlight).
 */
export const MAX_SOCKETS = 32;

/** The request timed out or ran out of its budget: names the server and how to change the wait. */
export class RequestTimeoutError extends UserError {}

export interface OpenClientOptions {
  kubeconfig?: string;
  context?: string;
  /** Default: the process budget (setRequestBudget). */
  budget?: Partial<RequestBudget>;
  retry?: Partial<RetryPolicy>;
  /** Called before each retry (for logs and tests). */
  onRetry?: (info: { method: string; path: string; attempt: number; delayMs: number; reason: string }) => void;
  /** Where this client's server warnings go (the reconciler's log); default: the process sink (stderr). */
  onWarning?: WarningSink;
}

/**
 * Loads a kubeconfig: the file given, else $KUBECONFIG / ~/.kube/config / the in-cluster service account. Without
 * a context named, the host's: the current one, or the one `vc connect` left when it switched to a virtual cluster.
 */
export function loadKubeConfig(opts: { kubeconfig?: string; context?: string }): KubeConfig {
  const kc = new KubeConfig();
  const missing = missingKubeconfig(opts.kubeconfig);
  if (missing) throw new UserError(missing);
  try {
    if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new Error(`cannot read kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ""}: ${(err as Error).message}`);
  }
  const context = opts.context ?? hostContextOf(opts.kubeconfig);
  if (context) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new Error(
        `context "${context}" not found in kubeconfig${known.length ? ` (contexts: ${known.join(", ")})` : ""}`,
      );
    }
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster: pass --context or --kubeconfig");
  allowPlainHttp(kc);
  return kc;
}

/**
 * A plain-http server has no TLS to verify; client-node refuses it unless skipTLSVerify is set on its cluster entry.
 */
export function allowPlainHttp(kc: KubeConfig): void {
  const cluster = kc.getCurrentCluster();
  if (cluster?.server.startsWith("http:") && !cluster.skipTLSVerify) {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
}

const AUTH_REFRESH_MS = 60_000;

export class KubeClient {
  readonly server: string;
  readonly stats: ClientStats = { requests: 0, retries: 0 };
  private readonly policy: RetryPolicy;
  readonly budget: RequestBudget;
  /** At most MAX_SOCKETS requests of this client in flight; the others wait their turn, in order. */
  private readonly inFlight = pLimit(MAX_SOCKETS);
  private auth?: { headers: Headers; at: number };
  private agent?: http.Agent;
  private readonly warnings?: WarningTeller;

  constructor(
    readonly kc: KubeConfig,
    private readonly opts: Pick<OpenClientOptions, "retry" | "onRetry" | "budget" | "onWarning"> = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.server = cluster.server.replace(/\/+$/, "");
    this.policy = { ...DEFAULT_RETRY, ...opts.retry };
    this.budget = { ...requestBudget(), ...opts.budget };
    if (opts.onWarning) this.warnings = new WarningTeller(opts.onWarning);
  }

  static open(opts: OpenClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(opts), opts);
  }

  get contextName(): string {
    return this.kc.getCurrentContext();
  }

  /** Headers (credentials) from the kubeconfig, refreshed every minute; one keep-alive agent for the client's life. */
  private async transport(): Promise<{ headers: Headers; agent: http.Agent }> {
    if (!this.auth || Date.now() - this.auth.at > AUTH_REFRESH_MS) {
      const init = await this.kc.applyToFetchOptions({});
      this.auth = { headers: init.headers as unknown as Headers, at: Date.now() };
      if (!this.agent) {
        const base = init.agent as http.Agent;
        const options = {
          ...((base as unknown as { options?: object }).options ?? {}),
          keepAlive: true,
          maxSockets: MAX_SOCKETS,
        };
        this.agent = base instanceof https.Agent ? new https.Agent(options) : new http.Agent(options);
      }
    }
    return { headers: this.auth.headers, agent: this.agent! };
  }

  /**
   * One API request with retries on 429 (Retry-After), 5xx, broken connections, and 409 when asked, all within the
   * request budget. Returns parsed JSON (or text).
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = this.server + path + queryString(withStrictFields(method, opts.query));
    const body =
      opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    const { timeoutMs, retryRefused } = this.budget;
    // The budget runs from when the request gets a connection (MAX_SOCKETS in flight): a wait behind this client's own
    // requests is not the server's silence.
    let deadline = Infinity;
    let started = false;
    let reason = "";
    for (let attempt = 1; ; attempt++) {
      let retryAfterMs: number | undefined;
      let fencedAt = Infinity;
      try {
        const { headers: base, agent } = await this.transport();
        const headers = new Headers(base);
        headers.set("Accept", opts.accept ?? (opts.response === "text" ? "*/*" : "application/json"));
        if (body !== undefined) headers.set("Content-Type", opts.contentType ?? "application/json");
        const { res, text } = await this.inFlight(() => {
          if (!started) {
            started = true;
            if (timeoutMs > 0) deadline = Date.now() + timeoutMs;
          }
          // A fenced write is sent only before its fence, and cut off at it (what the server already took, it keeps).
          fencedAt = opts.fence?.() ?? Infinity;
          if (Date.now() >= fencedAt) throw new FencedWriteError(`${method} ${path}: ${FENCE_PASSED}`);
          this.stats.requests++;
          return withDeadline(Math.min(deadline, fencedAt), async (signal) => {
            const answer = await fetch(url, { method, headers, body, agent, signal });
            const text =
              opts.maxBytes === undefined ? await answer.text() : await cappedText(answer, path, opts.maxBytes);
            return { res: answer, text };
          });
        });
        const texts = parseWarningHeaders(res.headers.raw().warning ?? []);
        if (texts.length > 0)
          this.warnings
            ? this.warnings.tell(this.server, method, path, texts)
            : tellWarnings(this.server, method, path, texts);
        if (res.ok) return (opts.response === "text" ? text : text ? JSON.parse(text) : undefined) as T;
        const parsed = parseBody(text);
        const error = new KubeApiError(method, path, res.status, res.statusText, parsed);
        if (!isRetryableStatus(res.status, opts.retryConflict ?? false) || attempt >= this.policy.attempts) throw error;
        reason = `${res.status}`;
        retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
      } catch (err) {
        if (err instanceof KubeApiError || err instanceof ResponseTooLarge || err instanceof FencedWriteError)
          throw err;
        if (Date.now() >= fencedAt && fencedAt < deadline)
          throw new FencedWriteError(`${method} ${path}: ${FENCE_PASSED} (cut off before the answer came)`);
        if (isTimeout(err) || Date.now() >= deadline) throw this.timedOut(method, path, reason);
        const code = (err as { code?: string }).code;
        if (code === "ECONNREFUSED" && !retryRefused) {
          throw new Error(
            `cannot reach the API server ${this.server}: connection refused (${method} ${path}); is the cluster ` +
              `up, and are --context and --kubeconfig the right ones?`,
          );
        }
        if (!isTransientNetworkError(err) || attempt >= this.policy.attempts) {
          throw new Error(`${method} ${this.server}${path}: ${(err as Error).message}`);
        }
        reason = code ?? (err as Error).message;
      }
      const delayMs = retryDelay(this.policy, attempt, retryAfterMs);
      if (Date.now() + delayMs >= deadline) throw this.timedOut(method, path, reason);
      this.stats.retries++;
      this.opts.onRetry?.({ method, path, attempt, delayMs, reason });
      await sleep(delayMs);
    }
  }

  /** The object, or undefined when it does not exist. */
  async get(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return await this.request<KubeObject>("GET", objectPath(ref));
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Every item of the collection at an API path matching the options, following `continue` pages. */
  async listPath<T = KubeObject>(path: string, opts: Omit<ListOptions, "namespace"> = {}): Promise<T[]> {
    return this.listPathMapped<T, T>(path, { ...opts, limit: opts.limit ?? 5000 }, (item) => item);
  }

  /**
   * Calls `onPage` with the items of each page of the collection at `path` as it arrives, following `continue` tokens.
   */
  private async eachPage<T>(
    path: string,
    opts: Omit<ListOptions, "namespace">,
    onPage: (items: T[]) => void,
  ): Promise<void> {
    let cont: string | undefined;
    do {
      const page = await this.page<T>(path, opts, cont);
      onPage(page.items);
      cont = page.continue;
    } while (cont);
  }

  /**
   * One page of the collection at `path`: from `cont` on, or the first. An expired continue token throws
   * ExpiredContinue.
   */
  private async page<T>(
    path: string,
    opts: Omit<ListOptions, "namespace">,
    cont: string | undefined,
  ): Promise<{ items: T[]; continue?: string }> {
    const query = opts.fromCache
      ? { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: "0" }
      : {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          limit: opts.limit ?? MAPPED_PAGE,
          continue: cont,
        };
    const page = await this.request<{ items?: T[]; metadata?: { continue?: string } }>("GET", path, {
      query,
      maxBytes: opts.maxBytes,
    }).catch((err: unknown) => {
      throw cont !== undefined && err instanceof KubeApiError && err.status === 410 ? new ExpiredContinue(err) : err;
    });
    return { items: page.items ?? [], continue: page.metadata?.continue || undefined };
  }

  /**
   * One page of a kind's objects matching the options, from the store (`opts.limit` a page, MAPPED_PAGE by default), in
   * the store's key order (namespace, then name), items with apiVersion and kind, and the token of the next page (none
   * after the last): for a reader that asks for a page only when it needs one (sinks/kube/fleet-inventory.ts) and
   * holds nothing of it between pages. A continue token the server no longer knows throws ExpiredContinue: the list
   * cannot be resumed where it stood.
   */
  async listPage(
    type: ResourceType,
    opts: Omit<ListOptions, "fromCache">,
    cont?: string,
  ): Promise<{ items: KubeObject[]; continue?: string }> {
    const page = await this.page<KubeObject>(resourcePath(type, opts.namespace), opts, cont);
    page.items.forEach(typedAs(type));
    return page;
  }

  /** Every object of a kind matching the options; items get apiVersion and kind. */
  async list(type: ResourceType, opts: ListOptions = {}): Promise<KubeObject[]> {
    return this.listMapped(type, { ...opts, limit: opts.limit ?? 5000 }, (item) => item);
  }

  /**
   * Every object of a kind matching the options, each mapped as its page arrives (an item mapped to undefined is
   * dropped): only one page of whole objects is alive at a time, where list() holds them all until the last page is
   * in. Paged by `opts.limit`, MAPPED_PAGE by default (from the store: a LIST served from the watch cache comes in one
   * page).
   */
  async listMapped<T>(type: ResourceType, opts: ListOptions, map: (item: KubeObject) => T | undefined): Promise<T[]> {
    const typed = typedAs(type);
    return this.listPathMapped<KubeObject, T>(resourcePath(type, opts.namespace), opts, (item) => map(typed(item)));
  }

  /**
   * listPath with each item mapped as its page arrives (listMapped, for a collection named by its path). A continue
   * token the server no longer knows (410: its store was compacted past the list's snapshot between two pages) makes
   * the list be read again from its first page, once, as client-go's pager does.
   */
  async listPathMapped<I, T>(
    path: string,
    opts: Omit<ListOptions, "namespace">,
    map: (item: I) => T | undefined,
  ): Promise<T[]> {
    for (let attempt = 1; ; attempt++) {
      const out: T[] = [];
      try {
        await this.eachPage<I>(path, opts, (items) => {
          for (const item of items) {
            const mapped = map(item);
            if (mapped !== undefined) out.push(mapped);
          }
        });
        return out;
      } catch (err) {
        if (!(err instanceof ExpiredContinue) || attempt > 1) throw err instanceof ExpiredContinue ? err.cause : err;
      }
    }
  }

  /**
   * Server-side apply of the whole object (field manager "vc" unless given, conflicts forced). `resourceVersion`: the
   * apply carries it, and the server refuses it (409, not retried) when the object has changed since it was read.
   */
  async apply(
    obj: KubeObject,
    opts: {
      dryRun?: boolean;
      fieldManager?: string;
      force?: boolean;
      resourceVersion?: string;
      fence?: () => number;
    } = {},
  ): Promise<KubeObject> {
    const fenced = opts.resourceVersion !== undefined;
    const body = fenced ? { ...obj, metadata: { ...obj.metadata, resourceVersion: opts.resourceVersion } } : obj;
    return this.request<KubeObject>("PATCH", objectPath(obj), {
      query: {
        fieldManager: opts.fieldManager ?? FIELD_MANAGER,
        force: opts.force ?? true,
        dryRun: opts.dryRun ? "All" : undefined,
      },
      body,
      contentType: "application/apply-patch+yaml",
      // A forced apply's 409 is a race, safe to resend; a fenced one's says the object changed since it was planned.
      retryConflict: !fenced && (opts.force ?? true),
      ...(opts.fence ? { fence: opts.fence } : {}),
    });
  }

  /**
   * Deletes an object; false when it was already gone. `preconditions` guard against deleting a replaced object (409).
   */
  async delete(
    ref: ObjectRef,
    opts: {
      dryRun?: boolean;
      preconditions?: { uid?: string; resourceVersion?: string };
      propagationPolicy?: string;
      fence?: () => number;
    } = {},
  ): Promise<boolean> {
    try {
      await this.request("DELETE", objectPath(ref), {
        ...(opts.fence ? { fence: opts.fence } : {}),
        query: { dryRun: opts.dryRun ? "All" : undefined },
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: opts.propagationPolicy ?? "Background",
          preconditions: opts.preconditions,
        },
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * The budget ran out; `lastFailure` is what the tries before got (a status, a network error), empty when none came
   * back.
   */
  private timedOut(method: string, path: string, lastFailure: string): RequestTimeoutError {
    const seconds = `${this.budget.timeoutMs / 1000}s`;
    const what = lastFailure
      ? `did not answer ${method} ${path} successfully within ${seconds} (last answer: ${lastFailure})`
      : `did not answer ${method} ${path} within ${seconds}`;
    return new RequestTimeoutError(
      `the API server ${this.server} ${what}: it may be down or overloaded; wait longer with --request-timeout ` +
        `(e.g. --request-timeout 2m, 0 for no limit)`,
    );
  }

  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }
}

/** The catalogue entry of an object's kind, or an error naming the kind vc does not know. */
function typeOf(ref: Pick<ObjectRef, "apiVersion" | "kind">): ResourceType {
  const type = resourceFor(ref.apiVersion, ref.kind);
  if (!type) throw new Error(`unknown kind ${ref.kind} (${ref.apiVersion}): vc cannot read or write it`);
  return type;
}

export function objectPath(ref: ObjectRef | KubeObject): string {
  const r =
    "metadata" in ref
      ? { apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.metadata.namespace, name: ref.metadata.name }
      : ref;
  const type = typeOf(r);
  if (type.namespaced && !r.namespace) throw new Error(`${r.kind} ${r.name} needs a namespace`);
  return resourcePath(type, r.namespace, r.name);
}

/** Why a fenced write was not sent. */
const FENCE_PASSED = "not written: this run's time to write ran out (it lost its Lease or its apply lease)";

/**
 * Writes ask the server to refuse unknown and duplicate fields (honoured from 1.25, ignored before) instead of dropping
 * them.
 */
const WRITES = new Set(["POST", "PUT", "PATCH"]);

function withStrictFields(method: string, query: Query | undefined): Query | undefined {
  if (!WRITES.has(method) || query?.fieldValidation !== undefined) return query;
  return { ...query, fieldValidation: "Strict" };
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const parts = Object.entries(query)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join("&")}` : "";
}

/** Thrown when a request's deadline passed before its answer was read whole. */
class DeadlineExceeded extends Error {}

/** The body of an answer read up to `maxBytes`: past it the connection is let go and ResponseTooLarge thrown. */
async function cappedText(answer: Awaited<ReturnType<typeof fetch>>, path: string, maxBytes: number): Promise<string> {
  if (Number(answer.headers.get("content-length") ?? 0) > maxBytes) {
    answer.body.resume();
    (answer.body as unknown as { destroy(): void }).destroy();
    throw new ResponseTooLarge(path, maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      (answer.body as unknown as { destroy(): void }).destroy();
      throw new ResponseTooLarge(path, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Runs one fetch and its body read under an abort signal that fires at `deadline` (never, when it is Infinity). The
 * abort also closes the request's connection: node-fetch 2.7.0 answers it with `req.abort()`, which on Node 20
 * destroys the socket (before or after the answer's headers, over TLS too) instead of handing it back to the agent,
 * so a hung server's connections do not pile up as the reconciler retries (test/host/client-sockets.test.ts, and
 * test/e2e/request-timeout.test.ts on a stopped API server). A deadline that only raced the fetch would leave it open.
 */
async function withDeadline<T>(deadline: number, run: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!Number.isFinite(deadline)) return run(undefined);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(1, deadline - Date.now()));
  try {
    return await run(controller.signal);
  } catch (err) {
    if (controller.signal.aborted) throw new DeadlineExceeded();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof DeadlineExceeded;
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Gives a LIST's items of `type` their apiVersion and kind (list items come without them), in place: no copy of tens
 * of thousands of objects.
 */
function typedAs(type: ResourceType): (item: KubeObject) => KubeObject {
  const apiVersion = apiVersionOf(type);
  return (item) => {
    item.apiVersion = apiVersion;
    item.kind = type.kind;
    return item;
  };
}

/** A LIST's continue token expired between two pages (410 Gone): the list is read again (listPathMapped). */
export class ExpiredContinue extends Error {
  constructor(readonly cause: KubeApiError) {
    super(cause.message);
  }
}
