// Which lists of a kind are keyed (associative) and by what, read from the Kubernetes OpenAPI; the committed table and
// its lookup.
import { LIST_KEYS } from "./list-keys.generated.js";

/**
 * A node of the list-key tree: the keys of the list at this path (`=`), and the children below it (map fields; a
 * list's children are the fields of its items). Only branches that lead to a keyed list are present.
 */
export interface ListKeyNode {
  "="?: readonly string[];
  [field: string]: ListKeyNode | readonly string[] | undefined;
}

/**
 * The list-key tree of a kind (`apps/v1` + `StatefulSet`), or undefined when the kind has no keyed lists (or is not
 * built in).
 */
export function listKeysOf(apiVersion: string, kind: string): ListKeyNode | undefined {
  return (LIST_KEYS as Record<string, ListKeyNode>)[`${apiVersion}/${kind}`];
}

/** The child node of a field, or undefined. */
export function childNode(node: ListKeyNode | undefined, field: string): ListKeyNode | undefined {
  if (!node || field === "=") return undefined;
  const c = node[field];
  return c && !Array.isArray(c) ? (c as ListKeyNode) : undefined;
}

/** Defaults the server fills into a key field when an item omits it (a port's protocol). */
export const KEY_DEFAULTS: Readonly<Record<string, unknown>> = { protocol: "TCP" };

type Schema = Record<string, unknown>;

/**
 * Builds the list-key tree of each kind from an OpenAPI v2 document (`GET /openapi/v2`): a list is keyed by
 * `x-kubernetes-list-map-keys` when it has them (list-type map), else by `x-kubernetes-patch-merge-key`
 * (server-side apply treats both as associative lists); any other list is atomic and compared whole.
 */
export function extractListKeys(
  openapi: { definitions: Record<string, Schema> },
  kinds: readonly string[],
): Record<string, ListKeyNode> {
  const defs = openapi.definitions;
  const byGvk = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    for (const g of (def["x-kubernetes-group-version-kind"] as
      | Array<{ group: string; version: string; kind: string }>
      | undefined) ?? []) {
      byGvk.set(`${g.group ? `${g.group}/` : ""}${g.version}/${g.kind}`, name);
    }
  }
  const walk = (schema: Schema | undefined, seen: Set<string>): ListKeyNode | undefined => {
    if (!schema) return undefined;
    const ref = schema.$ref as string | undefined;
    if (ref) {
      const name = ref.replace("#/definitions/", "");
      if (seen.has(name)) return undefined;
      return walk(defs[name], new Set([...seen, name]));
    }
    const node: ListKeyNode = {};
    if (schema.type === "array") {
      const keys =
        (schema["x-kubernetes-list-map-keys"] as string[] | undefined) ??
        (schema["x-kubernetes-patch-merge-key"] ? [schema["x-kubernetes-patch-merge-key"] as string] : undefined);
      const items = walk(schema.items as Schema | undefined, seen);
      if (items) Object.assign(node, items);
      if (keys) node["="] = keys;
    }
    for (const [field, sub] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      const child = walk(sub, seen);
      if (child) node[field] = child;
    }
    return Object.keys(node).length > 0 ? node : undefined;
  };
  const out: Record<string, ListKeyNode> = {};
  for (const kind of [...kinds].sort()) {
    const name = byGvk.get(kind);
    if (!name) throw new Error(`the OpenAPI document has no definition of ${kind}`);
    const tree = walk(defs[name], new Set([name]));
    if (tree) out[kind] = tree;
  }
  return out;
}
