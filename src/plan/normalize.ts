// Normalise objects for comparison: drop what the server fills in, and view a live object through the fields vc
// manages.
import type { KubeObject } from "../kube/object.js";
import { FIELD_MANAGER } from "../translate/keys.js";
import { forEachOwnedName, ownedChild, ownedFields, type FieldTree } from "./managed-fields.js";
import { childNode, KEY_DEFAULTS, listKeysOf, type ListKeyNode } from "./list-keys.js";
import { QUANTITY_MAPS, sameQuantity } from "../kube/quantity.js";

/** Metadata the server writes; never part of what vc manages. */
const SERVER_METADATA = [
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
];

type Json = unknown;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Removes nulls and empty maps and lists, recursively: `{}`/`[]`/`null` in an applied object mean "nothing". */
function compact(v: Json): Json {
  if (Array.isArray(v)) return v.map(compact);
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    if (val === null || val === undefined) continue;
    const c = compact(val);
    if ((Array.isArray(c) && c.length === 0) || (isPlainObject(c) && Object.keys(c).length === 0)) continue;
    out[k] = c;
  }
  return out;
}

/** A copy without server-filled metadata and without status. */
export function stripServerFields(obj: KubeObject): KubeObject {
  const { status: _status, ...rest } = obj;
  const metadata = { ...obj.metadata };
  for (const k of SERVER_METADATA) delete metadata[k];
  return { ...rest, metadata };
}

/** A Secret's stringData folded into data (base64), as the API server stores it. */
function foldStringData(obj: KubeObject): KubeObject {
  if (obj.kind !== "Secret" || obj.apiVersion !== "v1" || !isPlainObject(obj.stringData)) return obj;
  const { stringData, ...rest } = obj;
  const data: Record<string, unknown> = { ...(isPlainObject(obj.data) ? obj.data : {}) };
  for (const [k, v] of Object.entries(stringData as Record<string, unknown>))
    data[k] = Buffer.from(String(v), "utf8").toString("base64");
  return { ...rest, data };
}

/**
 * The desired object as it compares: server fields dropped, stringData folded, empties removed (no copy when already
 * so).
 */
export function normalizeDesired(desired: KubeObject): KubeObject {
  const clean =
    !("status" in desired) &&
    SERVER_METADATA.every((k) => !(k in desired.metadata)) &&
    !("stringData" in desired) &&
    !hasEmpties(desired);
  return clean ? desired : (compact(foldStringData(stripServerFields(desired))) as KubeObject);
}

/** True when `compact` would change something: a null, or an empty map or list, anywhere inside a map. */
function hasEmpties(v: Json): boolean {
  if (Array.isArray(v)) return v.some(hasEmpties);
  if (!isPlainObject(v)) return false;
  for (const k in v) {
    const val = v[k];
    if (val === null || val === undefined) return true;
    if (
      Array.isArray(val)
        ? val.length === 0 || hasEmpties(val)
        : isPlainObject(val) && (isEmptyMap(val) || hasEmpties(val))
    )
      return true;
  }
  return false;
}

function isEmptyMap(v: Record<string, unknown>): boolean {
  for (const _ in v) return false;
  return true;
}

/**
 * The live object seen through the fields vc manages: the paths present in the desired object, plus the fields vc's
 * field manager owns per managedFields but no longer desires (so a field dropped from the repository shows as a
 * removal). Lists the Kubernetes OpenAPI keys (containers by name, ports by port and protocol, env, volumes, mounts,
 * …: see list-keys.ts) are matched item by item by key, in desired order: an item another writer added is not
 * shown, an item vc applied that changed or vanished is. Other lists are atomic and compared by position.
 * Defaults, server fields and fields of other writers vanish. Empty maps, lists and nulls are dropped as in
 * `compact`. One pass, no intermediate copies.
 */
export function managedView(live: KubeObject, desired: KubeObject, opts: { normalized?: boolean } = {}): KubeObject {
  const want = opts.normalized ? desired : normalizeDesired(desired);
  const owned = ownedFields(live, FIELD_MANAGER);
  const source =
    live.kind === "Secret" && live.apiVersion === "v1" && isPlainObject(live.stringData) ? foldStringData(live) : live;
  return (project(want, source, owned, listKeysOf(live.apiVersion, live.kind), true) ?? {}) as KubeObject;
}

function project(
  desired: Json,
  live: Json,
  owned: FieldTree | undefined,
  node: ListKeyNode | undefined,
  top = false,
  quantities = false,
  skip?: readonly string[],
): Json {
  if (live === null || live === undefined) return undefined;
  if (isPlainObject(desired) && isPlainObject(live)) {
    const out: Record<string, unknown> = {};
    let n = 0;
    for (const k of Object.keys(desired)) {
      if (!(k in live) || (top && k === "status")) continue;
      // A quantity the server canonicalised ("1000m" stored as "1") is shown as vc wrote it.
      if (quantities && desired[k] !== live[k] && sameQuantity(desired[k], live[k])) {
        (out[k] = desired[k]), n++;
        continue;
      }
      const v = project(desired[k], live[k], ownedChild(owned, k), childNode(node, k), false, QUANTITY_MAPS.has(k));
      if (v !== undefined) (out[k] = v), n++;
    }
    if (owned) {
      forEachOwnedName(owned, (k) => {
        // A keyed item's key fields are owned with the item even when the server defaulted them (a port's protocol).
        if (k in desired || !(k in live) || (top && k === "status") || skip?.includes(k)) return;
        const v = compactValue(live[k]);
        if (v !== undefined) (out[k] = v), n++;
      });
    }
    return n > 0 ? out : undefined;
  }
  if (Array.isArray(desired) && Array.isArray(live)) {
    if (live.length === 0) return undefined;
    const keys = node?.["="];
    if (keys && desired.every(isPlainObject) && live.every(isPlainObject))
      return projectKeyed(desired, live, owned, node!, keys);
    return live.map((item, i) =>
      i < desired.length ? (project(desired[i], item, undefined, undefined) ?? emptyLike(item)) : compact(item),
    );
  }
  return compactValue(live);
}

/**
 * A keyed list seen through vc's fields: the live twin of each desired item (by key, in desired order), then the live
 * items vc's field manager owns but no longer desires. Items only other writers own are left out.
 */
function projectKeyed(
  desired: Record<string, unknown>[],
  live: Record<string, unknown>[],
  owned: FieldTree | undefined,
  node: ListKeyNode,
  keys: readonly string[],
): Json {
  const liveByKey = new Map<string, Record<string, unknown>>();
  for (const item of live) {
    const k = itemKey(item, keys);
    if (!liveByKey.has(k)) liveByKey.set(k, item);
  }
  const ownedItems = new Map<string, FieldTree>();
  if (owned) {
    for (const [k, sub] of Object.entries(owned)) {
      if (!k.startsWith("k:") || !sub || typeof sub !== "object") continue;
      try {
        ownedItems.set(itemKey(JSON.parse(k.slice(2)) as Record<string, unknown>, keys), sub as FieldTree);
      } catch {
        // not a key this table knows: ignore
      }
    }
  }
  const out: unknown[] = [];
  const matched = new Set<string>();
  for (const d of desired) {
    const k = itemKey(d, keys);
    const twin = liveByKey.get(k);
    if (!twin || matched.has(k)) continue;
    matched.add(k);
    out.push(project(d, twin, ownedItems.get(k), node, false, false, keys) ?? {});
  }
  for (const [k, item] of liveByKey) {
    if (matched.has(k) || !ownedItems.has(k)) continue;
    out.push(compact(item));
  }
  return out.length > 0 ? out : undefined;
}

/** The identity of a keyed list item: its key fields (server defaults filled in) as a string. */
function itemKey(item: Record<string, unknown>, keys: readonly string[]): string {
  return JSON.stringify(keys.map((k) => item[k] ?? KEY_DEFAULTS[k] ?? null));
}

/** `compact`, with an empty result (and null) as undefined. */
function compactValue(v: Json): Json {
  if (v === null || v === undefined) return undefined;
  const c = compact(v);
  if ((Array.isArray(c) && c.length === 0) || (isPlainObject(c) && Object.keys(c).length === 0)) return undefined;
  return c;
}

/** What `compact` keeps for a list item that projects to nothing. */
function emptyLike(item: Json): Json {
  return Array.isArray(item) ? [] : isPlainObject(item) ? {} : item;
}

/** The live object shown for a delete: what a user recognises, without server fields. */
export function normalizeLive(live: KubeObject): KubeObject {
  return compact(foldStringData(stripServerFields(live))) as KubeObject;
}
