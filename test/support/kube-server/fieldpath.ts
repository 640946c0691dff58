// Field paths of server-side apply: sets of paths in the fieldsV1 element syntax (f:, k:, v:, "."), read and written.

export type Path = string[];
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonMap = { [k: string]: Json };

export function isMap(v: unknown): v is JsonMap {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  // Keys holding undefined count as absent, as in JSON.
  const ka = Object.keys(a as object).filter((k) => (a as JsonMap)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as JsonMap)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as JsonMap)[k], (b as JsonMap)[k]));
}

/**
 * The merge keys of a list of maps, or undefined for an atomic list. Without schemas we follow the
 * upstream conventions: `name` (containers, env, volumes, ports with names), `containerPort`
 * (+`protocol`), `port` (+`protocol`), `mountPath`, `devicePath`, `ip`, `topologyKey`.
 */
export function listKeys(items: readonly Json[]): string[] | undefined {
  if (items.length === 0 || !items.every(isMap)) return undefined;
  const maps = items as JsonMap[];
  const candidates: string[][] = [
    ["name"],
    ["containerPort", "protocol"],
    ["containerPort"],
    ["port", "protocol"],
    ["port"],
    ["mountPath"],
    ["devicePath"],
    ["ip"],
  ];
  for (const keys of candidates) {
    if (!maps.every((m) => keys.every((k) => typeof m[k] === "string" || typeof m[k] === "number"))) continue;
    const seen = new Set(maps.map((m) => keyElement(m, keys)));
    if (seen.size === maps.length) return keys;
  }
  return undefined;
}

/** `k:{"name":"app"}` for an item and its keys (sorted, as upstream). */
export function keyElement(item: JsonMap, keys: readonly string[]): string {
  const obj: JsonMap = {};
  for (const k of [...keys].sort()) obj[k] = item[k]!;
  return `k:${JSON.stringify(obj)}`;
}

/** The leaf field paths of a value (list items contribute a "." path). */
export function fieldPaths(value: Json, prefix: Path = [], out: Set<string> = new Set()): Set<string> {
  if (isMap(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0 && prefix.length > 0) out.add(encode(prefix));
    for (const k of keys) {
      const child = value[k]!;
      const p = [...prefix, `f:${k}`];
      walkChild(child, p, out);
    }
  }
  return out;
}

function walkChild(child: Json, p: Path, out: Set<string>): void {
  if (isMap(child) && Object.keys(child).length > 0) fieldPaths(child, p, out);
  else if (Array.isArray(child)) {
    const keys = listKeys(child);
    if (!keys) out.add(encode(p));
    else
      for (const item of child as JsonMap[]) {
        const ip = [...p, keyElement(item, keys)];
        out.add(encode([...ip, "."]));
        fieldPaths(item, ip, out);
      }
  } else out.add(encode(p));
}

const SEP = "\n";
export function encode(p: Path): string {
  return p.join(SEP);
}
export function decode(s: string): Path {
  return s.split(SEP);
}

/** The value at a path, or undefined when absent. A "." element names the list item itself. */
export function getAt(root: Json | undefined, path: Path): Json | undefined {
  let cur: Json | undefined = root;
  for (const el of path) {
    if (cur === undefined) return undefined;
    if (el === ".") return cur;
    if (el.startsWith("f:")) {
      if (!isMap(cur)) return undefined;
      const k = el.slice(2);
      cur = Object.hasOwn(cur, k) ? cur[k] : undefined;
    } else if (el.startsWith("k:")) {
      if (!Array.isArray(cur)) return undefined;
      cur = findItem(cur, el);
    } else return undefined;
  }
  return cur;
}

const parsedKeys = new Map<string, JsonMap>();

function parseKey(el: string): JsonMap {
  let key = parsedKeys.get(el);
  if (!key) {
    if (parsedKeys.size > 50_000) parsedKeys.clear();
    key = JSON.parse(el.slice(2)) as JsonMap;
    parsedKeys.set(el, key);
  }
  return key;
}

export function findItem(list: Json[], el: string): Json | undefined {
  const key = parseKey(el);
  return list.find((item) => isMap(item) && Object.keys(key).every((k) => item[k] === key[k]));
}

/** Removes the value at a path (in place) and then any maps or lists left empty above it that `keep` does not hold. */
export function removeAt(root: JsonMap, path: Path, keep: (p: Path) => boolean): void {
  const p = path[path.length - 1] === "." ? path.slice(0, -1) : path;
  const chain: Json[] = [root];
  let cur: Json | undefined = root;
  for (let i = 0; i < p.length - 1; i++) {
    cur = getAt(cur, [p[i]!]);
    if (cur === undefined || cur === null || typeof cur !== "object") return;
    chain.push(cur);
  }
  for (let depth = p.length - 1; depth >= 0; depth--) {
    const parent = chain[depth]!;
    const el = p[depth]!;
    if (depth < p.length - 1) {
      const child = getAt(parent, [el]);
      const empty =
        child !== undefined &&
        ((isMap(child) && Object.keys(child).length === 0) || (Array.isArray(child) && child.length === 0));
      if (!empty || keep(p.slice(0, depth + 1))) return;
    }
    if (isMap(parent) && el.startsWith("f:")) delete parent[el.slice(2)];
    else if (Array.isArray(parent) && el.startsWith("k:")) {
      const item = findItem(parent, el);
      const idx = parent.indexOf(item as Json);
      if (idx >= 0) parent.splice(idx, 1);
    }
  }
}

/** Upstream's readable path: `.spec.containers[name="app"].image`. */
export function humanPath(p: Path): string {
  return p
    .filter((el) => el !== ".")
    .map((el) => {
      if (el.startsWith("f:")) return `.${el.slice(2)}`;
      if (el.startsWith("k:")) {
        const key = JSON.parse(el.slice(2)) as JsonMap;
        return `[${Object.keys(key)
          .map((k) => `${k}=${JSON.stringify(key[k])}`)
          .join(",")}]`;
      }
      if (el.startsWith("v:")) return `[=${el.slice(2)}]`;
      return el;
    })
    .join("");
}

/** A set of paths as a fieldsV1 tree: `{"f:metadata":{"f:labels":{"f:app":{}}}}`. */
export function toFieldsV1(paths: Iterable<string>): JsonMap {
  const root: JsonMap = {};
  for (const s of [...paths].sort()) {
    let node = root;
    for (const el of decode(s)) {
      if (!isMap(node[el])) node[el] = {};
      node = node[el] as JsonMap;
    }
  }
  return root;
}

/** The inverse of toFieldsV1: leaves (and "." markers) of a fieldsV1 tree. */
export function fromFieldsV1(tree: unknown, prefix: Path = [], out: Set<string> = new Set()): Set<string> {
  if (!isMap(tree)) return out;
  for (const [el, child] of Object.entries(tree)) {
    const p = [...prefix, el];
    if (isMap(child) && Object.keys(child).length > 0) fromFieldsV1(child, p, out);
    else out.add(encode(p));
  }
  return out;
}
