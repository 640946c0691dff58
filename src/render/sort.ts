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

/** A copy with every object's keys in sorted order (arrays keep their order). */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeysDeep) as T;
  if (typeof value !== "object" || value === null) return value;
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src).sort()) {
    const v = src[k];
    if (v !== undefined) out[k] = sortKeysDeep(v);
  }
  return out as T;
}

export function sortObjects(objects: readonly KubeObject[]): KubeObject[] {
  return [...objects].sort(compareObjects).map(sortKeysDeep);
}
