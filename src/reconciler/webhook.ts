// GitHub push webhooks: HMAC-SHA256 signature check (constant time) and which ref a push moved (pure).
import { createHmac, timingSafeEqual } from "node:crypto";

/** True when `X-Hub-Signature-256` (`sha256=<hex>`) is the HMAC of the raw body under `secret`. */
export function verifySignature(secret: string | Buffer, body: Buffer, header: string | undefined): boolean {
  if (!header || !header.startsWith("sha256=")) return false;
  const given = Buffer.from(header.slice("sha256=".length), "hex");
  const expected = createHmac("sha256", secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
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
  const header = one(req.headers["x-hub-signature-256"]);
  if (secret === undefined || !verifySignature(secret, req.body, header)) {
    return { status: 401, trigger: false, reason: "signature missing or invalid" };
  }
  const event = one(req.headers["x-github-event"]) ?? "push";
  if (event === "ping") return { status: 200, trigger: false, reason: "pong" };
  if (event !== "push") return { status: 200, trigger: false, reason: `event ${event} ignored` };
  let payload: { ref?: unknown; after?: unknown };
  try {
    payload = JSON.parse(req.body.toString("utf8")) as typeof payload;
  } catch {
    return { status: 400, trigger: false, reason: "body is not JSON" };
  }
  const pushed = typeof payload.ref === "string" ? payload.ref : "";
  const wanted = ref.startsWith("refs/") ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  if (!wanted.includes(pushed)) return { status: 200, trigger: false, reason: `push to ${pushed || "unknown ref"} ignored` };
  const commit = typeof payload.after === "string" ? payload.after : undefined;
  return { status: 202, trigger: true, reason: `push to ${pushed}`, commit };
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
