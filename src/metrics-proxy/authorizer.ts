// Authorization of an aggregated API server: a SubjectAccessReview against the virtual API server for each request's
// user and attributes, answers cached for a short while (as the API server's webhook authorizer does).
import type { RequestUser } from "./front-proxy.js";
import { parseRequestPath, type RequestPath } from "./request-path.js";

/** What a request does, in the terms of a SubjectAccessReview. */
export type RequestAttributes =
  | {
      kind: "resource";
      verb: "get" | "list";
      group: string;
      version: string;
      resource: string;
      namespace?: string;
      name?: string;
    }
  | { kind: "nonResource"; verb: "get"; path: string };

/**
 * The attributes of a GET to `path` on a server of `apiGroup`: metrics and core pods/nodes are resources, the rest
 * (discovery) non-resource paths. A string is read with parseRequestPath, the parser routing uses (400 when ambiguous).
 */
export function requestAttributes(path: string | RequestPath, apiGroup: string): RequestAttributes {
  const parsed = typeof path === "string" ? parseRequestPath(path) : path;
  const p = parsed.segments;
  const resource = (group: string, version: string, rest: string[]): RequestAttributes | undefined => {
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if ((rest[0] !== "pods" && rest[0] !== "nodes") || rest.length > 2) return undefined;
    const name = rest[1];
    return {
      kind: "resource",
      verb: name === undefined ? "list" : "get",
      group,
      version,
      resource: rest[0],
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    };
  };
  let attrs: RequestAttributes | undefined;
  if (p[0] === "apis" && p[1] === apiGroup && p[2] !== undefined && p.length > 3)
    attrs = resource(apiGroup, p[2], p.slice(3));
  else if (p[0] === "api" && p[1] === "v1" && p.length > 2) attrs = resource("", "v1", p.slice(2));
  return attrs ?? { kind: "nonResource", verb: "get", path: parsed.path };
}

export interface Decision {
  allowed: boolean;
  reason: string;
  /**
   * True when no decision could be had (the virtual API server failed or was too slow, the queue was full): not a
   * denial.
   */
  undecided?: boolean;
}

/** Sends one SubjectAccessReview (the body as `authorization.k8s.io/v1`) and returns its status; `signal` aborts it. */
export type ReviewSender = (
  review: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<{ allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string }>;

export interface AuthorizerOptions {
  /** How long an answer is reused (allowed and denied alike). */
  ttlMs: number;
  /** Most cached answers; the oldest go first. */
  maxEntries?: number;
  /** How long a request waits for its decision, queued and sent (default 5 s); past it, undecided. */
  timeoutMs?: number;
  /** Reviews sent to the virtual API server at once (default 16). */
  maxInFlight?: number;
  /** Reviews waiting for one of those (default 256); beyond, undecided at once. */
  maxQueued?: number;
  now?: () => number;
}

const DEFAULT_AUTHZ_LIMITS = { timeoutMs: 5_000, maxInFlight: 16, maxQueued: 256 };

/**
 * Decides with SubjectAccessReviews, caching decisions by user and attributes. Bounded: at most `maxInFlight` reviews
 * are sent at once and `maxQueued` wait, each request gets its decision within `timeoutMs` or none. A review that
 * fails, times out or finds the queue full is undecided (the server answers 503), never a denial, and never cached.
 */
export class SubjectAccessReviewer {
  private readonly cache = new Map<string, { decision: Decision; expires: number }>();
  private readonly inflight = new Map<string, Promise<Decision>>();
  private readonly waiting: Array<() => void> = [];
  private sending = 0;
  /** Reviews sent (for tests and the proxy's metrics). */
  reviews = 0;

  constructor(
    private readonly send: ReviewSender,
    private readonly opts: AuthorizerOptions,
  ) {}

  /** Reviews being sent and waiting (for tests and metrics). */
  get load(): { sending: number; queued: number } {
    return { sending: this.sending, queued: this.waiting.length };
  }

  async authorize(user: RequestUser, attrs: RequestAttributes): Promise<Decision> {
    const now = (this.opts.now ?? Date.now)();
    const key = JSON.stringify([user.name, [...user.groups].sort(), Object.entries(user.extra).sort(), attrs]);
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.decision;
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const p = this.bounded(user, attrs).then((d) => {
      if (d.cacheable) {
        this.cache.delete(key);
        this.cache.set(key, { decision: d.decision, expires: now + this.opts.ttlMs });
        const max = this.opts.maxEntries ?? 10_000;
        while (this.cache.size > max) this.cache.delete(this.cache.keys().next().value!);
      }
      return d.decision;
    });
    this.inflight.set(key, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(key);
    }
  }

  /**
   * One review within the deadline: waits for a sending slot in a bounded queue, then sends, aborting at the deadline.
   */
  private async bounded(
    user: RequestUser,
    attrs: RequestAttributes,
  ): Promise<{ decision: Decision; cacheable: boolean }> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_AUTHZ_LIMITS.timeoutMs;
    const undecided = (reason: string) => ({ decision: { allowed: false, reason, undecided: true }, cacheable: false });
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      if (this.sending >= (this.opts.maxInFlight ?? DEFAULT_AUTHZ_LIMITS.maxInFlight)) {
        if (this.waiting.length >= (this.opts.maxQueued ?? DEFAULT_AUTHZ_LIMITS.maxQueued))
          return undecided("too many authorization requests waiting");
        const admitted = await new Promise<boolean>((resolve) => {
          const go = () => {
            abort.signal.removeEventListener("abort", giveUp);
            resolve(true);
          };
          const giveUp = () => {
            const i = this.waiting.indexOf(go);
            if (i >= 0) this.waiting.splice(i, 1);
            resolve(false);
          };
          this.waiting.push(go);
          abort.signal.addEventListener("abort", giveUp, { once: true });
        });
        if (!admitted || abort.signal.aborted) {
          if (admitted) this.waiting.shift()?.();
          return undecided(`no SubjectAccessReview could be sent within ${timeoutMs} ms`);
        }
      }
      this.sending++;
      try {
        return await this.review(user, attrs, abort.signal, timeoutMs);
      } finally {
        this.sending--;
        this.waiting.shift()?.();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async review(
    user: RequestUser,
    attrs: RequestAttributes,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<{ decision: Decision; cacheable: boolean }> {
    const spec: Record<string, unknown> = { user: user.name, groups: user.groups };
    if (Object.keys(user.extra).length > 0) spec.extra = user.extra;
    if (attrs.kind === "resource") {
      const { kind: _k, ...resourceAttributes } = attrs;
      spec.resourceAttributes = resourceAttributes;
    } else {
      spec.nonResourceAttributes = { path: attrs.path, verb: attrs.verb };
    }
    this.reviews++;
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error(`the SubjectAccessReview got no answer within ${timeoutMs} ms`));
      if (signal.aborted) fail();
      else signal.addEventListener("abort", fail, { once: true });
    });
    aborted.catch(() => {});
    try {
      const status = await Promise.race([
        this.send({ apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec }, signal),
        aborted,
      ]);
      if (status.evaluationError && !status.allowed)
        return { decision: { allowed: false, reason: status.evaluationError }, cacheable: false };
      return { decision: { allowed: status.allowed === true, reason: status.reason ?? "" }, cacheable: true };
    } catch (err) {
      return {
        decision: {
          allowed: false,
          reason: `authorization failed: ${err instanceof Error ? err.message : String(err)}`,
          undecided: true,
        },
        cacheable: false,
      };
    }
  }
}

/**
 * The API server's wording of a denial, e.g. `pods.metrics.orch.io is forbidden: User "u" cannot list resource "pods"
 * ...`.
 */
export function forbiddenMessage(user: string, attrs: RequestAttributes, reason: string): string {
  const why = reason ? `: ${reason}` : "";
  if (attrs.kind === "nonResource") return `forbidden: User "${user}" cannot get path "${attrs.path}"${why}`;
  const what = attrs.group ? `${attrs.resource}.${attrs.group}` : attrs.resource;
  const name = attrs.name !== undefined ? ` "${attrs.name}"` : "";
  const scope = attrs.namespace !== undefined ? ` in the namespace "${attrs.namespace}"` : " at the cluster scope";
  return (
    `${what}${name} is forbidden: User "${user}" cannot ${attrs.verb} resource "${attrs.resource}" ` +
    `in API group "${attrs.group}"${scope}${why}`
  );
}
