// Normalise objects for comparison: drop what the server fills in, and view a live object through the fields vc manages.
import type { KubeObject } from "../kube/object.js";
import { FIELD_MANAGER } from "../translate/keys.js";
import { ownedFields, type FieldTree } from "./managed-fields.js";

/** Metadata the server writes; never part of what vc manages. */
const SERVER_METADATA = ["uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"];

type Json = unknown;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Removes nulls and empty maps and lists, recursively: `{}`/`[]`/`null` in an applied object mean "nothing". */
export function compact(v: Json): Json {
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
  for (const [k, v] of Object.entries(stringData as Record<string, unknown>)) data[k] = Buffer.from(String(v), "utf8").toString("base64");
  return { ...rest, data };
}

/** The desired object as it compares: server fields dropped, stringData folded, empties removed. */
export function normalizeDesired(desired: KubeObject): KubeObject {
  return compact(foldStringData(stripServerFields(desired))) as KubeObject;
}

/**
 * The live object seen through the fields vc manages: the paths present in the desired object (list items by
 * position, lengths kept), plus the fields vc's field manager owns per managedFields but no longer desires
 * (so a field dropped from the repository shows as a removal). Defaults and fields of other writers vanish.
 */
export function managedView(live: KubeObject, desired: KubeObject, opts: { normalized?: boolean } = {}): KubeObject {
  const owned = ownedFields(live, FIELD_MANAGER);
  const base = foldStringData(stripServerFields(live));
  return compact(project(opts.normalized ? desired : normalizeDesired(desired), base, owned)) as KubeObject;
}

function project(desired: Json, live: Json, owned: FieldTree | undefined): Json {
  if (isPlainObject(desired) && isPlainObject(live)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(desired)) {
      if (k in live) out[k] = project(desired[k], live[k], owned?.get(k));
    }
    if (owned) {
      for (const k of owned.keys()) {
        if (!(k in desired) && k in live && k !== "status") out[k] = live[k];
      }
    }
    return out;
  }
  if (Array.isArray(desired) && Array.isArray(live)) {
    return live.map((item, i) => (i < desired.length ? project(desired[i], item, undefined) : item));
  }
  return live;
}

/** The live object shown for a delete: what a user recognises, without server fields. */
export function normalizeLive(live: KubeObject): KubeObject {
  return compact(foldStringData(stripServerFields(live))) as KubeObject;
}
