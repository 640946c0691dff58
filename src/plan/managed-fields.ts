// Reads server-side-apply managedFields (fieldsV1) into the tree of map fields a field manager owns.
import type { KubeObject } from "../kube/object.js";

/** Field name -> owned sub-fields (an empty map: the field itself, a leaf). List items are not descended into. */
export type FieldTree = Map<string, FieldTree>;

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
}

/** The fields `manager` owns through server-side apply on the main resource, or undefined when it owns none. */
export function ownedFields(obj: KubeObject, manager: string): FieldTree | undefined {
  const entries = Array.isArray(obj.metadata.managedFields) ? (obj.metadata.managedFields as ManagedFieldsEntry[]) : [];
  let tree: FieldTree | undefined;
  for (const e of entries) {
    if (!e || e.manager !== manager || e.operation !== "Apply" || e.subresource || !e.fieldsV1) continue;
    tree = merge(tree ?? new Map(), parse(e.fieldsV1));
  }
  return tree;
}

function parse(fields: Record<string, unknown>): FieldTree {
  const tree: FieldTree = new Map();
  for (const [key, sub] of Object.entries(fields)) {
    if (!key.startsWith("f:")) continue; // ".", and list items "k:", "v:", "i:" are compared by position instead
    tree.set(key.slice(2), sub && typeof sub === "object" ? parse(sub as Record<string, unknown>) : new Map());
  }
  return tree;
}

function merge(a: FieldTree, b: FieldTree): FieldTree {
  for (const [k, v] of b) a.set(k, a.has(k) ? merge(a.get(k)!, v) : v);
  return a;
}
