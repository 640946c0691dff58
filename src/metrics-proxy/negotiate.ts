// Content negotiation of discovery answers: which form an Accept header asks for (legacy JSON, aggregated v2 or
// v2beta1),
// the Content-Type of each, ETags and If-None-Match, and the 406 for an Accept that names nothing the proxy serves.
import { createHash } from "node:crypto";
import {
  AGGREGATED_GROUP,
  AGGREGATED_KIND,
  AGGREGATED_VERSIONS,
  aggregatedList,
  type AggregatedVersion,
} from "./discovery.js";
import { ApiError } from "./status.js";

/** The form of a discovery answer: the legacy document, or aggregated discovery of one version. */
export type DiscoveryForm = "legacy" | AggregatedVersion;

export interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q, keys lower-cased, values unquoted. */
  params: Record<string, string>;
  q: number;
}

const JSON_TYPE = "application/json";

/** The Content-Type of a form, parameters in the order clients send them (g, v, as). */
function contentTypeOf(form: DiscoveryForm): string {
  return form === "legacy" ? JSON_TYPE : `${JSON_TYPE};g=${AGGREGATED_GROUP};v=${form};as=${AGGREGATED_KIND}`;
}

/**
 * The media ranges of an Accept header, most preferred first: by q (absent: 1), then the more specific range
 * (a concrete type, a concrete subtype, more parameters), then the order they were written in. Ranges with q=0
 * (refused) and malformed ranges are left out.
 */
export function parseAccept(header: string): MediaRange[] {
  const ranges: Array<MediaRange & { index: number }> = [];
  header.split(",").forEach((clause, index) => {
    const [mediaType = "", ...rawParams] = clause.split(";");
    const m = /^\s*([\w.+*-]+)\/([\w.+*-]+)\s*$/.exec(mediaType);
    if (!m) return;
    const params: Record<string, string> = {};
    let q = 1;
    for (const raw of rawParams) {
      const eq = raw.indexOf("=");
      if (eq < 0) continue;
      const key = raw.slice(0, eq).trim().toLowerCase();
      const value = raw
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1");
      if (key === "q") {
        const n = Number(value);
        q = Number.isFinite(n) && value !== "" ? Math.min(Math.max(n, 0), 1) : 0;
      } else {
        params[key] = value;
      }
    }
    if (q <= 0) return;
    ranges.push({ type: m[1]!.toLowerCase(), subtype: m[2]!.toLowerCase(), params, q, index });
  });
  const specificity = (r: MediaRange) => (r.type !== "*" ? 4 : 0) + (r.subtype !== "*" ? 2 : 0);
  ranges.sort(
    (a, b) =>
      b.q - a.q ||
      specificity(b) - specificity(a) ||
      Object.keys(b.params).length - Object.keys(a.params).length ||
      a.index - b.index,
  );
  return ranges.map(({ index: _i, ...r }) => r);
}

/** The form a range asks for when `aggregatable` forms are offered; undefined when it names nothing served here. */
function formOf(r: MediaRange, aggregatable: boolean): DiscoveryForm | undefined {
  const { g, v, as } = r.params;
  const transform = g !== undefined || v !== undefined || as !== undefined;
  if (!transform) {
    const typeOk =
      r.type === "*" ? r.subtype === "*" : r.type === "application" && (r.subtype === "*" || r.subtype === "json");
    return typeOk ? "legacy" : undefined;
  }
  // A transformation is only ever the aggregated list, only on /api and /apis, only as JSON (as the API server's
  // discovery endpoint restrictions allow); anything else (a Table, a partial object, protobuf) is not served.
  if (!aggregatable || r.type !== "application" || r.subtype !== "json") return undefined;
  if (g !== AGGREGATED_GROUP || as !== AGGREGATED_KIND) return undefined;
  return (AGGREGATED_VERSIONS as readonly string[]).includes(v ?? "") ? (v as AggregatedVersion) : undefined;
}

/**
 * The form to answer with: the first of the client's preferences that is served here. No Accept header (or an empty
 * one) means the legacy document; undefined means none of what was asked for is served (a 406).
 */
export function negotiateDiscovery(accept: string | undefined, aggregatable: boolean): DiscoveryForm | undefined {
  if (accept === undefined || accept.trim() === "") return "legacy";
  for (const r of parseAccept(accept)) {
    const form = formOf(r, aggregatable);
    if (form) return form;
  }
  return undefined;
}

/** The 406 of an Accept naming nothing served at this path. */
function notAcceptable(aggregatable: boolean): ApiError {
  const served: DiscoveryForm[] = aggregatable ? ["legacy", ...AGGREGATED_VERSIONS] : ["legacy"];
  return new ApiError(
    "NotAcceptable",
    `only the following media types are accepted: ${served.map(contentTypeOf).join(", ")}`,
  );
}

/** A strong ETag of a body: the quoted hex SHA-512 of its bytes, as the API server tags aggregated discovery. */
export function etagOf(body: string): string {
  return `"${createHash("sha512").update(body).digest("hex").toUpperCase()}"`;
}

/** True when an If-None-Match header names `etag` (or is `*`); weak tags compare by their opaque part. */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

export interface DiscoveryAnswer {
  status: 200 | 304;
  headers: Record<string, string>;
  /** Empty for a 304. */
  body: string;
}

/**
 * The answer to a discovery GET: `legacy()` builds the legacy document, `aggregated()` (on /api and /apis only) the
 * items of the aggregated list. Every answer varies by Accept; aggregated answers carry an ETag and are 304 when the
 * client already holds them. Throws the 406 ApiError when nothing asked for is served.
 */
export function discoveryAnswer(
  accept: string | undefined,
  ifNoneMatch: string | undefined,
  legacy: () => unknown,
  aggregated?: () => unknown[],
): DiscoveryAnswer {
  const form = negotiateDiscovery(accept, aggregated !== undefined);
  if (!form) throw notAcceptable(aggregated !== undefined);
  const headers: Record<string, string> = { "Content-Type": contentTypeOf(form), Vary: "Accept" };
  if (form === "legacy")
    return {
      status: 200,
      headers: { ...headers, "Cache-Control": "no-cache, private" },
      body: JSON.stringify(legacy()),
    };
  const body = JSON.stringify(aggregatedList(form, aggregated!()));
  const etag = etagOf(body);
  // Discovery is the same for every user of the cluster: the API server marks it public for caches that honour Vary.
  const cached = { ...headers, ETag: etag, "Cache-Control": "public" };
  if (matchesEtag(ifNoneMatch, etag)) return { status: 304, headers: cached, body: "" };
  return { status: 200, headers: cached, body };
}
