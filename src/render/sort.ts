// Deterministic output: objects in apply order then namespace and name; keys sorted recursively.
import { refOf, type KubeObject } from "../kube/object.js";
import { compareRefs } from "../kube/order.js";

/** Objects in apply order (src/kube/order.ts), then kind, namespace and name. */
function compareObjects(a: KubeObject, b: KubeObject): number {
  return compareRefs(refOf(a), refOf(b)) || cmp(a.apiVersion, b.apiVersion);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A copy with every object's keys in sorted order (arrays keep their order; undefined members are dropped). */
export function sortKeysDeep<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const arr = new Array(value.length);
    for (let i = 0; i < value.length; i++) arr[i] = sortKeysDeep(value[i]);
    return arr as T;
  }
  const src = value as Record<string, unknown>;
  const keys = Object.keys(src);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = src[k];
    if (v !== undefined) out[k] = sortKeysDeep(v);
  }
  return out as T;
}

export function sortObjects(objects: readonly KubeObject[]): KubeObject[] {
  return [...objects].sort(compareObjects).map(sortKeysDeep);
}
