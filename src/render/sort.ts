// Deterministic output: objects in a fixed kind order then namespace and name; keys sorted recursively.
import type { KubeObject } from "../kube/object.js";

/** Apply order: what others depend on first (namespace, identities, config), workloads, then mesh routing. */
export const KIND_ORDER: readonly string[] = [
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "ResourceQuota",
  "ServiceAccount",
  "Secret",
  "ConfigMap",
  "Role",
  "RoleBinding",
  "Service",
  "StatefulSet",
  "Deployment",
  "Gateway",
  "DestinationRule",
  "VirtualService",
];

const rank = new Map(KIND_ORDER.map((k, i) => [k, i]));

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareObjects(a: KubeObject, b: KubeObject): number {
  const ra = rank.get(a.kind) ?? KIND_ORDER.length;
  const rb = rank.get(b.kind) ?? KIND_ORDER.length;
  return (
    ra - rb ||
    cmp(a.kind, b.kind) ||
    cmp(a.metadata.namespace ?? "", b.metadata.namespace ?? "") ||
    cmp(a.metadata.name, b.metadata.name) ||
    cmp(a.apiVersion, b.apiVersion)
  );
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
