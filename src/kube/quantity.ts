// Kubernetes resource quantities ("500m", "1Gi", "1e3"), read exactly as the API server's resource.Quantity reads them
// (its ParseQuantity: grammar, suffixes, rounding and caps) and compared exactly, so "1000m" and "1" are one amount
// and "1Ei" is more than "64Gi".
//
// Grammar (k8s.io/apimachinery resource.Quantity): [sign] digits [. digits] suffix, where the suffix is a binary SI
// one (Ki Mi Gi Ti Pi Ei), a decimal SI one (n u m "" k M G T P E) or a decimal exponent (e or E, an optional sign,
// digits). Quirks of the server kept on purpose: a number may have no digits at all ("m", "-", "Ki" read as 0),
// "1." is allowed, the exponent is truncated to 32 bits, amounts are rounded away from zero to a multiple of 10^-9
// when they are not already one, and a binary SI amount read on the slow path is capped at 2^63-1.

/** An exact amount: `mantissa` × 10^`exponent`, with no factor of ten left in a non-zero mantissa. */
export interface Quantity {
  mantissa: bigint;
  exponent: number;
  /** Decimal digits of |mantissa| (kept so that comparing two long amounts never prints them again). */
  digits: number;
}

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const MAX_INT64 = (1n << 63n) - 1n;
/**
 * The one place vc is stricter than the server: a quantity string longer than this is refused (the server would read
 * it, slowly: printing a million-digit amount takes seconds). No real amount comes near it.
 */
const MAX_QUANTITY_LENGTH = 1000;
const NANO = -9;
const SUFFIX_CHARS = "eEinumkKMGTP";
// The server trims a quantity it decodes from JSON (strings.TrimSpace of the raw JSON text): only white space that a
// JSON encoder leaves unescaped is trimmed; tab, line breaks and U+2028/U+2029 arrive escaped and are refused.
const SPACE =
  /^[ \u0085\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+|[ \u0085\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+$/g;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const int32 = (n: number): number => n | 0;

/**
 * A normalised amount (trailing zeros of the mantissa moved into the exponent); `text` is the mantissa's decimal form
 * when known.
 */
function amount(mantissa: bigint, exponent: number, text: string = mantissa.toString()): Quantity {
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0, digits: 1 };
  const zeros = text.length - text.replace(/0+$/, "").length;
  const kept = text.slice(0, text.length - zeros);
  const digits = kept.length - (kept.startsWith("-") ? 1 : 0);
  return { mantissa: zeros === 0 ? mantissa : BigInt(kept), exponent: exponent + zeros + 0, digits };
}

const digitCount = (q: Quantity): number => q.digits;

/** The pieces of a quantity string (the server's parseQuantityString), or undefined for a malformed one. */
function scan(
  str: string,
): { positive: boolean; value: string; num: string; denom: string; suffix: string } | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === "-") (positive = false), pos++;
  else if (str[0] === "+") pos++;
  while (pos < end && str[pos] === "0") pos++;
  if (pos >= end) return { positive, value: "0", num: "0", denom: "", suffix: "" };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  const num = str.slice(numStart, pos) || "0";
  if (pos >= end) return { positive, value: str, num, denom: "", suffix: "" };
  let denom = "";
  if (str[pos] === ".") {
    const denomStart = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
    if (pos >= end) return { positive, value: str, num, denom, suffix: "" };
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === "-" || str[pos] === "+")) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** Base and exponent of a suffix (the server's suffixer), or undefined when it is none. */
function interpret(
  suffix: string,
): { base: 10 | 2; exponent: number; format: "DecimalSI" | "BinarySI" | "DecimalExponent" } | undefined {
  if (suffix in DECIMAL) return { base: 10, exponent: DECIMAL[suffix]!, format: "DecimalSI" };
  if (suffix in BINARY) return { base: 2, exponent: BINARY[suffix]!, format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E")) {
    const digits = suffix.slice(1);
    if (!/^[+-]?\d+$/.test(digits)) return undefined;
    const parsed = BigInt(digits);
    if (parsed > MAX_INT64 || parsed < -MAX_INT64 - 1n) return undefined; // strconv.ParseInt out of range
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: "DecimalExponent" };
  }
  return undefined;
}

/** inf.Dec's SetString of the numeric part: an optional sign, digits with at most one point, at least one digit. */
function decimalOf(value: string): { unscaled: bigint; text: string; scale: number } | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return undefined;
  const frac = m[3] ?? "";
  const text = `${m[2]}${frac}`.replace(/^0+(?=\d)/, "");
  const unscaled = BigInt(text);
  return m[1] === "-" && unscaled !== 0n
    ? { unscaled: -unscaled, text: `-${text}`, scale: frac.length }
    : { unscaled, text, scale: frac.length };
}

/** 10^n for a small non-negative n. */
const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** `q` rounded away from zero to a multiple of 10^`scale` (the server's RoundUp). */
function roundUp(q: Quantity, scale: number): Quantity {
  if (q.mantissa === 0n || q.exponent >= scale) return q;
  const negative = q.mantissa < 0n;
  const abs = negative ? -q.mantissa : q.mantissa;
  const drop = scale - q.exponent; // digits below 10^scale
  let kept: bigint;
  if (drop >= q.digits)
    kept = 1n; // below one unit: the smallest amount
  else {
    const unit = pow10(drop);
    kept = abs / unit + (abs % unit === 0n ? 0n : 1n);
  }
  return amount(negative ? -kept : kept, scale);
}

/**
 * The amount of a quantity string as the API server reads it from a JSON string (white space a JSON encoder leaves
 * unescaped is trimmed first, as the server's decoder does), or undefined when the server refuses it (or it is longer
 * than MAX_QUANTITY_LENGTH).
 */
export function parseQuantity(text: string): Quantity | undefined {
  if (text.length > MAX_QUANTITY_LENGTH) return undefined;
  const str = text.replace(SPACE, "");
  if (str.length === 0) return undefined;
  if (str === "0") return amount(0n, 0);
  const parts = scan(str);
  if (!parts) return undefined;
  const { positive, value, num, denom } = parts;
  const suffix = interpret(parts.suffix);
  if (!suffix) return undefined;

  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (suffix.base === 10) {
    scale = suffix.exponent;
    precision = 18 - (num.length + denom.length);
  } else if (suffix.exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(suffix.exponent);
    precision = 15 - num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0) {
    scale = int32(scale - denom.length);
    if (scale >= NANO) {
      const shifted = BigInt(num + denom);
      const result = shifted * mantissa;
      if (result <= MAX_INT64) return amount(positive ? result : -result, scale);
    }
  }

  // The slow path: the exact decimal, the suffix applied, rounded up to 10^-9; a binary amount is capped.
  const dec = decimalOf(value);
  if (!dec) return undefined;
  let q: Quantity;
  if (suffix.base === 10) q = amount(dec.unscaled, -int32(dec.scale - suffix.exponent), dec.text);
  else q = amount(dec.unscaled << BigInt(suffix.exponent), -dec.scale);
  q = roundUp(q, NANO);
  if (suffix.format === "BinarySI" && compareQuantity(abs(q), amount(MAX_INT64, 0)) > 0)
    q = amount(q.mantissa < 0n ? -MAX_INT64 : MAX_INT64, 0);
  return q;
}

const abs = (q: Quantity): Quantity => (q.mantissa < 0n ? { ...q, mantissa: -q.mantissa } : q);

/** -1, 0 or 1 as `a` is less than, equal to or more than `b`; exact for any exponent. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const sa = a.mantissa === 0n ? 0 : a.mantissa < 0n ? -1 : 1;
  const sb = b.mantissa === 0n ? 0 : b.mantissa < 0n ? -1 : 1;
  if (sa !== sb || sa === 0) return Math.sign(sa - sb);
  // Same sign: compare magnitudes by their number of integer digits first, then digit by digit at one exponent.
  const la = digitCount(a) + a.exponent;
  const lb = digitCount(b) + b.exponent;
  if (la !== lb) return la > lb ? sa : -sa;
  const e = Math.min(a.exponent, b.exponent); // both mantissas then have at most la - e digits
  const x = abs(a).mantissa * pow10(a.exponent - e);
  const y = abs(b).mantissa * pow10(b.exponent - e);
  return x === y ? 0 : x > y ? sa : -sa;
}

/**
 * The amount the server stores for a quantity in a resource list (container requests and limits, ResourceQuota
 * spec.hard, capacity): its defaulting rounds every amount up to a multiple of 10^-3 ("0.0004" is stored as "1m").
 */
export function parseResourceListQuantity(text: string): Quantity | undefined {
  const q = parseQuantity(text);
  return q && roundUp(q, -3);
}

const asQuantity = (v: unknown): Quantity | undefined =>
  typeof v === "string"
    ? parseResourceListQuantity(v)
    : typeof v === "number" && Number.isFinite(v)
      ? parseResourceListQuantity(String(v))
      : undefined;

/** True when both are quantity strings (or numbers) of the same amount as a resource list stores them. */
export function sameQuantity(a: unknown, b: unknown): boolean {
  const x = asQuantity(a);
  const y = asQuantity(b);
  return x !== undefined && y !== undefined && compareQuantity(x, y) === 0;
}

/** `a` compared with `b` as a resource list stores them, when both are quantities; undefined when either is not one. */
export function compareQuantities(a: unknown, b: unknown): number | undefined {
  const x = asQuantity(a);
  const y = asQuantity(b);
  return x === undefined || y === undefined ? undefined : compareQuantity(x, y);
}

/**
 * Keys whose map values are quantities: container `resources.limits/requests`, ResourceQuota `spec.hard`, PVC
 * `capacity`.
 */
export const QUANTITY_MAPS = new Set(["limits", "requests", "hard", "capacity"]);
