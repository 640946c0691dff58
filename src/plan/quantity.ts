// Kubernetes resource quantities ("500m", "1Gi", "1e3"): the API server stores them in canonical form
// ("1000m" comes back as "1"), so values vc renders are compared by amount, not by spelling.

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** The amount of a quantity string, or undefined when it is not one. */
export function parseQuantity(text: string): number | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const suffix = m[2] ?? "";
  const mult = suffix.startsWith("e") || (suffix.startsWith("E") && suffix.length > 1) ? 10 ** Number(suffix.slice(1)) : SUFFIX[suffix];
  return mult === undefined ? undefined : Number(m[1]) * mult;
}

/** True when both are quantity strings (or numbers) of the same amount. */
export function sameQuantity(a: unknown, b: unknown): boolean {
  const x = typeof a === "number" ? a : typeof a === "string" ? parseQuantity(a) : undefined;
  const y = typeof b === "number" ? b : typeof b === "string" ? parseQuantity(b) : undefined;
  if (x === undefined || y === undefined) return false;
  return x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** Keys whose map values are quantities: container `resources.limits/requests`, ResourceQuota `spec.hard`, PVC `capacity`. */
export const QUANTITY_MAPS = new Set(["limits", "requests", "hard", "capacity"]);
