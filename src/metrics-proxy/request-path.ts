// The one reading of a request path: decoded once, refused when ambiguous; authorization and routing both use it.
import { ApiError } from "./status.js";

/** A request path as the proxy understands it: its decoded segments and the normalised path they spell. */
export interface RequestPath {
  /**
   * Decoded segments, none empty (`/apis/metrics.k8s.io/v1beta1/pods` → `["apis", "metrics.k8s.io", "v1beta1",
   * "pods"]`).
   */
  readonly segments: readonly string[];
  /** `/` and the segments joined by `/`: what authorization names and routing serves. */
  readonly path: string;
}

function refuse(raw: string, why: string): ApiError {
  return new ApiError("BadRequest", `malformed path ${JSON.stringify(raw)}: ${why}`);
}

/**
 * Parses the path of a request (without its query): each segment percent-decoded exactly once. Refused with 400:
 * a path not starting with `/`, a malformed escape, an encoded `/` or `\` (`%2F`, `%5C`), a `%` left after decoding
 * (double encoding), `.` or `..` segments (plain or encoded), an empty segment (`//`) other than one trailing `/`,
 * and control characters. So no path can be authorized as one thing and served as another.
 */
export function parseRequestPath(raw: string): RequestPath {
  if (!raw.startsWith("/")) throw refuse(raw, "it must start with /");
  const parts = raw.slice(1).split("/");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 1 && parts[0] === "") return { segments: [], path: "/" };
  const segments = parts.map((part) => {
    if (part === "") throw refuse(raw, "empty segment (//)");
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      throw refuse(raw, "malformed percent-encoding");
    }
    if (/[/\\]/.test(decoded)) throw refuse(raw, "encoded / or \\ in a segment");
    if (decoded.includes("%")) throw refuse(raw, "% left after decoding (double encoding)");
    if (decoded === "." || decoded === "..") throw refuse(raw, "dot segment");
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(decoded)) throw refuse(raw, "control character");
    return decoded;
  });
  return { segments, path: `/${segments.join("/")}` };
}
