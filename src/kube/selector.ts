// Kubernetes label and field selectors: parse the full string syntax once, match many times.

type Operator = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export class SelectorError extends Error {}

const KEY_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const KEY_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?)$/;

function checkKey(key: string): string {
  const slash = key.indexOf("/");
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (!KEY_NAME.test(name) || (prefix !== undefined && (prefix.length > 253 || !KEY_PREFIX.test(prefix)))) {
    throw new SelectorError(`invalid label key "${key}"`);
  }
  return key;
}

function checkValue(value: string): string {
  if (!VALUE.test(value)) throw new SelectorError(`invalid label value: "${value}"`);
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms.map((t) => t.trim());
}

const SET_TERM = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQ_TERM = /^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(\S*)$/;

function parseTerm(term: string): Requirement {
  if (term === "") throw new SelectorError("found '', expected: identifier");
  const set = SET_TERM.exec(term);
  if (set) {
    const values = set[3]!.split(",").map((v) => checkValue(v.trim()));
    return { key: checkKey(set[1]!), operator: set[2] as "in" | "notin", values };
  }
  if (/\s(in|notin)\s/.test(` ${term} `) || /\(/.test(term)) {
    throw new SelectorError(`unable to parse requirement: "${term}": expected: '(' and a value list`);
  }
  const eq = EQ_TERM.exec(term);
  if (eq) {
    const op = eq[2]!;
    const value = eq[3]!;
    if (op === ">" || op === "<") {
      if (!/^-?\d+$/.test(value))
        throw new SelectorError(`for 'gt', 'lt' operators, the value must be an integer: "${term}"`);
      return { key: checkKey(eq[1]!), operator: op === ">" ? "gt" : "lt", values: [value] };
    }
    return { key: checkKey(eq[1]!), operator: op === "!=" ? "!=" : "=", values: [checkValue(value)] };
  }
  if (term.startsWith("!")) return { key: checkKey(term.slice(1).trim()), operator: "!", values: [] };
  if (/^\S+$/.test(term)) return { key: checkKey(term), operator: "exists", values: [] };
  throw new SelectorError(`unable to parse requirement: "${term}"`);
}

/** Parses a label selector string (`a=b,c!=d,e in (f,g),h notin (i),j,!k`). Empty selects everything. */
export function parseLabelSelector(selector: string | undefined | null): Requirement[] {
  if (selector === undefined || selector === null || selector.trim() === "") return [];
  return splitTerms(selector).map(parseTerm);
}

export type Labels = Readonly<Record<string, string>> | undefined | null;

/** True when the labels satisfy every requirement (the semantics of the API server). */
export function matchesRequirements(requirements: readonly Requirement[], labels: Labels): boolean {
  for (const r of requirements) {
    const has = labels != null && Object.hasOwn(labels, r.key);
    const value = has ? labels![r.key]! : undefined;
    switch (r.operator) {
      case "=":
      case "in":
        if (!has || !r.values.includes(value!)) return false;
        break;
      case "!=":
      case "notin":
        if (has && r.values.includes(value!)) return false;
        break;
      case "exists":
        if (!has) return false;
        break;
      case "!":
        if (has) return false;
        break;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        const n = Number(value);
        const bound = Number(r.values[0]);
        if (r.operator === "gt" ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

/** A compiled label selector. */
export function labelMatcher(selector: string | undefined | null): (labels: Labels) => boolean {
  const reqs = parseLabelSelector(selector);
  if (reqs.length === 0) return () => true;
  return (labels) => matchesRequirements(reqs, labels);
}

/** Formats `matchLabels` as a selector string, keys sorted. */
export function formatMatchLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",");
}

export interface FieldRequirement {
  field: string;
  operator: "=" | "!=";
  value: string;
}

/**
 * Parses a field selector (`metadata.name=x,metadata.namespace!=y`). `supported` lists the fields the
 * caller can evaluate; any other field is an error, as on the API server.
 */
export function parseFieldSelector(
  selector: string | undefined | null,
  supported: readonly string[] = ["metadata.name", "metadata.namespace"],
): FieldRequirement[] {
  if (selector === undefined || selector === null || selector.trim() === "") return [];
  return selector.split(",").map((term) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*([^\s]*)\s*$/.exec(term);
    if (!m) throw new SelectorError(`invalid field selector: "${term}"`);
    if (!supported.includes(m[1]!)) throw new SelectorError(`field label not supported: ${m[1]}`);
    return { field: m[1]!, operator: m[2] === "!=" ? "!=" : "=", value: m[3]! };
  });
}

/** True when the field values satisfy every field requirement. */
export function matchesFields(
  requirements: readonly FieldRequirement[],
  fields: Readonly<Record<string, string>>,
): boolean {
  return requirements.every((r) => ((fields[r.field] ?? "") === r.value) === (r.operator === "="));
}

/** Values one selector names with `in (...)` at most: a hundred keeps it near 2 KB (a chunk of a fleet). */
export const MAX_SELECTED_VALUES = 100;

/** `key in (a,b,...)` naming each value once; beyond MAX_SELECTED_VALUES, `key` alone (every object that has it). */
export function selectorIn(key: string, values: readonly string[]): string {
  const unique = [...new Set(values)];
  return unique.length <= MAX_SELECTED_VALUES ? `${key} in (${unique.join(",")})` : key;
}
