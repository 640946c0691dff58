// Patch kinds: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch (with kubectl's
// directives).
import { findItem, isMap, keyElement, listKeys, type Json, type JsonMap } from "./fieldpath.js";
import { badRequest, ApiError } from "./status.js";

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isMap(patch)) return patch;
  const out: JsonMap = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== "string" || (pointer !== "" && !pointer.startsWith("/")))
    throw badRequest(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer === "" ? [] : pointer.slice(1).split("/").map(unescapePointer);
}

function resolveParent(doc: Json, tokens: string[], op: string): [Json, string] {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(cur) ? cur[Number(t)] : isMap(cur) ? cur[t] : undefined;
    if (next === undefined || next === null || typeof next !== "object")
      throw new ApiError(
        422,
        `the server rejected our request due to an error in our request: ${op}: missing path /${tokens.join("/")}`,
        "Invalid",
      );
    cur = next;
  }
  return [cur, tokens[tokens.length - 1]!];
}

function getPointer(doc: Json, tokens: string[], op: string): Json {
  let cur: Json | undefined = doc;
  for (const t of tokens) {
    cur = Array.isArray(cur) ? cur[Number(t)] : isMap(cur) ? cur[t] : undefined;
    if (cur === undefined) throw new ApiError(422, `${op}: path /${tokens.join("/")} does not exist`, "Invalid");
  }
  return cur;
}

function addAt(doc: Json, tokens: string[], value: Json): Json {
  if (tokens.length === 0) return value;
  const [parent, last] = resolveParent(doc, tokens, "add");
  if (Array.isArray(parent)) {
    const idx = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(idx) || idx < 0 || idx > parent.length)
      throw new ApiError(422, `add: index ${last} out of bounds`, "Invalid");
    parent.splice(idx, 0, value);
  } else (parent as JsonMap)[last] = value;
  return doc;
}

function removePointer(doc: Json, tokens: string[]): Json {
  const [parent, last] = resolveParent(doc, tokens, "remove");
  if (Array.isArray(parent)) {
    const idx = Number(last);
    if (!(idx >= 0 && idx < parent.length)) throw new ApiError(422, `remove: index ${last} out of bounds`, "Invalid");
    return parent.splice(idx, 1)[0]!;
  }
  const map = parent as JsonMap;
  if (!(last in map)) throw new ApiError(422, `remove: path /${tokens.join("/")} does not exist`, "Invalid");
  const v = map[last]!;
  delete map[last];
  return v;
}

/** Applies an RFC 6902 JSON patch to a copy of the document. */
export function jsonPatch(doc: Json, ops: unknown): Json {
  if (!Array.isArray(ops)) throw badRequest("json patch must be a JSON array of operations");
  let out: Json = structuredClone(doc);
  for (const op of ops) {
    if (!isMap(op) || typeof op.op !== "string")
      throw badRequest(`invalid JSON patch operation: ${JSON.stringify(op)}`);
    const path = parsePointer(op.path);
    switch (op.op) {
      case "add":
        out = addAt(out, path, structuredClone(op.value ?? null));
        break;
      case "remove":
        removePointer(out, path);
        break;
      case "replace":
        getPointer(out, path, "replace");
        if (path.length === 0) out = structuredClone(op.value ?? null);
        else {
          removePointer(out, path);
          out = addAt(out, path, structuredClone(op.value ?? null));
        }
        break;
      case "move": {
        const v = removePointer(out, parsePointer(op.from));
        out = addAt(out, path, v);
        break;
      }
      case "copy":
        out = addAt(out, path, structuredClone(getPointer(out, parsePointer(op.from), "copy")));
        break;
      case "test":
        if (JSON.stringify(getPointer(out, path, "test")) !== JSON.stringify(op.value))
          throw new ApiError(422, `test operation failed at ${String(op.path)}`, "Invalid");
        break;
      default:
        throw badRequest(`unknown JSON patch operation "${op.op}"`);
    }
  }
  return out;
}

/**
 * Strategic merge patch as kubectl sends it: maps merge, `null` deletes, lists of maps with merge keys
 * merge by key (`$patch: delete` removes an item), `$setElementOrder/<field>` orders a list,
 * `$deleteFromPrimitiveList/<field>` removes values, `$retainKeys` keeps only the listed keys,
 * `$patch: replace` replaces a map. Other lists are replaced.
 */
export function strategicMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isMap(patch)) return patch;
  if (patch.$patch === "replace") {
    const { $patch: _drop, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (patch.$patch === "delete") return {};
  let out: JsonMap = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$setElementOrder/") || k === "$patch") continue;
    if (k === "$retainKeys") {
      if (Array.isArray(v)) {
        const keep = new Set(v.map(String));
        out = Object.fromEntries(Object.entries(out).filter(([key]) => keep.has(key) || key in patch));
      }
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length);
      const drop = Array.isArray(v) ? v : [];
      if (Array.isArray(out[field])) out[field] = (out[field] as Json[]).filter((x) => !drop.some((d) => d === x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      const order = patch[`$setElementOrder/${k}`];
      out[k] = mergeList(out[k], v, Array.isArray(order) ? order : undefined);
      continue;
    }
    out[k] = strategicMergePatch(out[k], v);
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isMap(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.startsWith("$"))
      .map(([k, x]) => [k, stripDirectives(x)]),
  );
}

function mergeList(base: Json | undefined, patch: Json[], order: Json[] | undefined): Json {
  const baseList = Array.isArray(base) ? base : [];
  const sample = [...patch.filter((p) => !(isMap(p) && p.$patch === "delete")), ...baseList, ...(order ?? [])];
  const keys =
    listKeys(sample.filter(isMap).length === sample.length ? sample : []) ??
    (order?.length ? listKeys(order) : undefined);
  if (!keys) {
    if (patch.length === 1 && isMap(patch[0]) && patch[0].$patch === "replace") return [];
    return stripDirectives(patch);
  }
  let out: Json[] = baseList.slice();
  for (const item of patch) {
    if (!isMap(item)) continue;
    const el = keyElement(
      item,
      keys.filter((k) => k in item),
    );
    const existing = findItem(out, el);
    if (item.$patch === "delete") {
      if (existing !== undefined) out = out.filter((x) => x !== existing);
      continue;
    }
    if (existing !== undefined) out[out.indexOf(existing)] = strategicMergePatch(existing, item);
    else out.push(stripDirectives(item));
  }
  if (order) {
    const rank = (x: Json): number => {
      const i = order.findIndex((o) => isMap(o) && isMap(x) && keys.every((k) => !(k in o) || o[k] === x[k]));
      return i < 0 ? order.length : i;
    };
    out = out
      .map((x, i) => [x, i] as const)
      .sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1])
      .map(([x]) => x);
  }
  return out;
}
