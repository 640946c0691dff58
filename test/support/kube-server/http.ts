// HTTP helpers of the test server: reading bodies (JSON or YAML), writing JSON and Status answers.
import type { IncomingMessage, ServerResponse } from "node:http";
import { load } from "js-yaml";
import { ApiError, badRequest } from "./status.js";

const MAX_BODY = 32 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readRaw(req)).toString("utf8");
}

export async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, "Request entity too large: limit is 3145728", "RequestEntityTooLarge");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Parses a request body as JSON, or as YAML when `yaml` (server-side apply accepts both). */
export function parseBody(text: string, yaml = false): unknown {
  if (text.trim() === "") throw badRequest("the request body is empty");
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!yaml) throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
  try {
    return load(text, { maxAliases: 100 } as never);
  } catch (err) {
    throw badRequest(`error decoding YAML: ${(err as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = "application/json"): void {
  sendText(res, code, typeof body === "string" ? body : JSON.stringify(body), contentType);
}

export function sendText(res: ServerResponse, code: number, text: string, contentType = "text/plain"): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const buf = Buffer.from(text, "utf8");
  res.writeHead(code, {
    "Content-Type": contentType,
    "Content-Length": buf.length,
    "Cache-Control": "no-cache, private",
  });
  res.end(buf);
}

export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendJson(res, err.code, err.toStatus());
}

/** True when the Accept header asks for a meta.k8s.io Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

/** True when the Accept header asks for metadata only (meta.k8s.io PartialObjectMetadata or its list). */
export function wantsMetadataOnly(accept: string | undefined): boolean {
  return !!accept && /as=PartialObjectMetadata(List)?\b/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

/** An object as a PartialObjectMetadata: its metadata only. */
export function partialMetadata(o: { metadata: unknown }): Record<string, unknown> {
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata };
}

/** True when the Accept header asks for aggregated discovery v2. */
export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  return (
    !!accept &&
    /as=APIGroupDiscoveryList/.test(accept) &&
    /v=v2(?![a-z0-9])/.test(accept) &&
    /g=apidiscovery\.k8s\.io/.test(accept)
  );
}

/** The request URL; "//x/y" is a path here, not a protocol-relative URL. */
export function requestUrl(raw: string | undefined): URL {
  const text = raw ?? "/";
  try {
    return text.startsWith("/") ? new URL(`http://localhost${text}`) : new URL(text);
  } catch {
    return new URL("http://localhost/%invalid-url");
  }
}
