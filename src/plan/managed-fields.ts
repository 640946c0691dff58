// Reads server-side-apply managedFields (fieldsV1) to find the fields a field manager owns.
import type { KubeObject } from "../kube/object.js";

/**
 * A fieldsV1 tree as the server sends it: `f:<name>` keys for map fields (a nested tree, `{}` for a leaf),
 * `k:`/`v:`/`i:` keys for list items, `.` for the field itself. Used as is: no parsing pass.
 */
export type FieldTree = Record<string, unknown>;

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: FieldTree;
}

/** The fields `manager` owns through server-side apply on the main resource, or undefined when it owns none. */
export function ownedFields(obj: KubeObject, manager: string): FieldTree | undefined {
  const entries = obj.metadata.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let tree: FieldTree | undefined;
  for (const e of entries as ManagedFieldsEntry[]) {
    if (
      !e ||
      e.manager !== manager ||
      e.operation !== "Apply" ||
      e.subresource ||
      !e.fieldsV1 ||
      typeof e.fieldsV1 !== "object"
    )
      continue;
    tree = tree ? merge(tree, e.fieldsV1) : e.fieldsV1;
  }
  return tree;
}

/** The owned sub-tree of map field `name`, or undefined. */
export function ownedChild(tree: FieldTree | undefined, name: string): FieldTree | undefined {
  const sub = tree?.[`f:${name}`];
  return sub && typeof sub === "object" ? (sub as FieldTree) : undefined;
}

/**
 * Calls fn with each map field owned directly under a tree (`k:` list items are read by normalize.ts's keyed-list
 * projection).
 */
export function forEachOwnedName(tree: FieldTree, fn: (name: string) => void): void {
  for (const k in tree) if (k.charCodeAt(0) === 102 /* f */ && k.charCodeAt(1) === 58 /* : */) fn(k.slice(2));
}

function merge(a: FieldTree, b: FieldTree): FieldTree {
  const out: FieldTree = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      prev && typeof prev === "object" && v && typeof v === "object" ? merge(prev as FieldTree, v as FieldTree) : v;
  }
  return out;
}
