// Public host names as claims (pure): a pattern matching a host, and two claims overlapping.

/**
 * Whether `host` lies within the host pattern `pattern`: `*` allows anything, `*.suffix` any name (or
 * wildcard) ending in `.suffix`, anything else only itself. Case does not matter (DNS names).
 */
export function hostAllowed(host: string, pattern: string): boolean {
  const h = host.toLowerCase();
  const p = pattern.toLowerCase();
  if (p === "*") return true;
  if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return h === p;
}

/** `*` and `*.example.com` match other hosts; any other host matches only itself (hosts are lower-cased). */
export const isWildcard = (host: string): boolean => host === "*" || host.startsWith("*.");

/** Two host claims overlap when either matches the other (`*.example.com` and `shop.example.com`, `*` and any). */
export function overlaps(a: string, b: string): boolean {
  return hostAllowed(a, b) || hostAllowed(b, a);
}
