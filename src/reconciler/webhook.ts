// GitHub push webhooks: HMAC-SHA256 signature check (constant time) and which ref a push moved (pure).
import { createHmac, timingSafeEqual, type Hmac } from "node:crypto";

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/** True when the header has the form of a signature (`sha256=` and 64 hex digits): checked before reading a body. */
export function looksSigned(header: string | undefined): header is string {
  return header !== undefined && SIGNATURE.test(header);
}

/** True when `X-Hub-Signature-256` (`sha256=<hex>`) is the HMAC of the raw body under `secret`. */
export function verifySignature(secret: string | Buffer, body: Buffer, header: string | undefined): boolean {
  const body$ = new StreamedBody(secret, body.length);
  body$.update(body);
  return body$.verify(header);
}

/**
 * A webhook body read as it streams: the HMAC covers every byte, but only the first `keep` bytes are kept, so an
 * unauthenticated sender can make the server hold no more than that.
 */
export class StreamedBody {
  readonly #hmac: Hmac;
  readonly #kept: Buffer[] = [];
  size = 0;

  constructor(
    secret: string | Buffer,
    readonly keep: number,
  ) {
    this.#hmac = createHmac("sha256", secret);
  }

  update(chunk: Buffer): void {
    this.#hmac.update(chunk);
    const room = this.keep - Math.min(this.size, this.keep);
    if (room > 0) this.#kept.push(chunk.length <= room ? chunk : chunk.subarray(0, room));
    this.size += chunk.length;
  }

  /** The whole body, or undefined when it was longer than `keep`. */
  get body(): Buffer | undefined {
    return this.size <= this.keep ? Buffer.concat(this.#kept) : undefined;
  }

  /** Constant-time comparison with the signature header; call once, after the last chunk. */
  verify(header: string | undefined): boolean {
    if (!looksSigned(header)) return false;
    const given = Buffer.from(header.slice("sha256=".length), "hex");
    const expected = this.#hmac.digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** The signature header GitHub would send for a body (for tests and tools). */
export function sign(secret: string | Buffer, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export type WebhookDecision =
  | { status: 202; trigger: true; reason: string; commit?: string }
  | { status: 200 | 400 | 401 | 405; trigger: false; reason: string };

export interface WebhookRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Decides what a webhook request means for a reconciler following `ref` (a branch or tag name). */
export function decideWebhook(req: WebhookRequest, secret: string | Buffer | undefined, ref: string): WebhookDecision {
  if (req.method !== "POST") return { status: 405, trigger: false, reason: "use POST" };
  const verified = secret !== undefined && verifySignature(secret, req.body, one(req.headers["x-hub-signature-256"]));
  return decideVerified(req.headers, verified, req.body, ref);
}

/**
 * The decision once the signature is known: `body` is undefined when it was too long to keep (a verified push then
 * triggers a pass without naming the commit). Any signed body that is not a push payload gets a 4xx.
 */
export function decideVerified(
  headers: WebhookRequest["headers"],
  verified: boolean,
  body: Buffer | undefined,
  ref: string,
): WebhookDecision {
  if (!verified) return { status: 401, trigger: false, reason: "signature missing or invalid" };
  const event = one(headers["x-github-event"]) ?? "push";
  if (event === "ping") return { status: 200, trigger: false, reason: "pong" };
  if (event !== "push") return { status: 200, trigger: false, reason: `event ${event} ignored` };
  if (body === undefined)
    return { status: 202, trigger: true, reason: "push (payload too long to read: the followed ref is fetched)" };
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString("utf8"));
  } catch {
    return { status: 400, trigger: false, reason: "body is not JSON" };
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return { status: 400, trigger: false, reason: "body is not a push payload (a JSON object)" };
  }
  const { ref: pushedRef, after } = payload as { ref?: unknown; after?: unknown };
  const pushed = typeof pushedRef === "string" ? pushedRef : "";
  const wanted = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  if (!wanted.includes(pushed))
    return { status: 200, trigger: false, reason: `push to ${pushed || "unknown ref"} ignored` };
  const commit = typeof after === "string" ? after : undefined;
  return { status: 202, trigger: true, reason: `push to ${pushed}`, commit };
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
