// Server-side apply: merge an applied configuration into the live object, with field ownership and conflicts.
import type { KubeObject } from "../../../src/kube/object.js";
import {
  decode,
  deepEqual,
  encode,
  fieldPaths,
  findItem,
  getAt,
  humanPath,
  isMap,
  keyElement,
  listKeys,
  removeAt,
  type Json,
  type JsonMap,
} from "./fieldpath.js";
import { findManager, nowTime, ownedView, readManagers, writeManagers, type Manager } from "./managed.js";
import { ApiError } from "./status.js";

export interface ApplyOptions {
  manager: string;
  force: boolean;
  /** "status": an apply to the status subresource, which owns and changes status only. */
  subresource?: string;
}

/** What an apply owns: everything but status for the main resource, only status for the status subresource. */
function appliedPart(obj: KubeObject, subresource: string | undefined): JsonMap {
  const view = ownedView(obj, { dropStatus: subresource !== "status" });
  if (subresource !== "status") return view;
  return view.status === undefined ? {} : { status: view.status };
}

interface Conflict {
  manager: Manager;
  path: string;
}

function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === "Update") s += ` using ${m.apiVersion} at ${m.time}`;
  return s;
}

/** The 409 upstream answers, worded the same way (kubectl prints it and suggests --force-conflicts). */
function conflictError(conflicts: Conflict[]): ApiError {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${printManager(c.manager)}`,
    field: humanPath(decode(c.path)),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message =
      `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ` +
      `${humanPath(decode(conflicts[0]!.path))}`;
  } else {
    const byManager = new Map<string, { m: Manager; paths: string[] }>();
    for (const c of conflicts) {
      const key = printManager(c.manager);
      const g = byManager.get(key) ?? { m: c.manager, paths: [] };
      g.paths.push(humanPath(decode(c.path)));
      byManager.set(key, g);
    }
    const lines: string[] = [];
    for (const key of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${key}:`);
      for (const p of byManager.get(key)!.paths) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  }
  return new ApiError(409, message, "Conflict", { causes });
}

/** Merges an applied value into a live one: maps recursively, keyed lists item by item, anything else replaced. */
function mergeApplied(base: Json | undefined, patch: Json): Json {
  if (isMap(patch)) {
    const out: JsonMap = isMap(base) ? { ...base } : {};
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) continue;
      out[k] = mergeApplied(out[k], v);
    }
    return out;
  }
  if (Array.isArray(patch)) {
    // An empty applied list over a keyed live list contributes no items (the live items stay, minus dropped ones).
    const keys = listKeys(patch) ?? (patch.length === 0 && Array.isArray(base) ? listKeys(base) : undefined);
    if (!keys || !Array.isArray(base)) return patch;
    const items = patch as JsonMap[];
    const used = new Set<Json>();
    const out: Json[] = items.map((item) => {
      const match = findItem(base, keyElement(item, keys));
      if (match === undefined) return item;
      used.add(match);
      return mergeApplied(match, item);
    });
    for (const b of base) if (!used.has(b) && isMap(b) && keys.every((k) => k in b)) out.push(b);
    return out;
  }
  return patch;
}

/**
 * Applies `applied` for `opts.manager` onto `current` (undefined: the object is created). Returns the new
 * object with managedFields updated; throws a 409 listing conflicts unless `force`.
 */
export function serverSideApply(current: KubeObject | undefined, applied: KubeObject, opts: ApplyOptions): KubeObject {
  const base: KubeObject = current
    ? structuredClone(current)
    : {
        apiVersion: applied.apiVersion,
        kind: applied.kind,
        metadata: {
          name: applied.metadata.name,
          ...(applied.metadata.namespace ? { namespace: applied.metadata.namespace } : {}),
        },
      };
  const managers = readManagers(current);
  // An object nobody manages yet (e.g. seeded with server.put) is owned by "before-first-apply", as upstream.
  if (current && managers.length === 0) {
    managers.push({
      manager: "before-first-apply",
      operation: "Update",
      apiVersion: current.apiVersion,
      time: nowTime(),
      fields: fieldPaths(appliedPart(current, opts.subresource)),
      ...(opts.subresource ? { subresource: opts.subresource } : {}),
    });
  }
  const appliedView = appliedPart(applied, opts.subresource);
  const newSet = fieldPaths(appliedView);
  let me = findManager(managers, opts.manager, "Apply", opts.subresource);
  const oldSet = me?.fields ?? new Set<string>();
  const liveView = ownedView(base);

  const conflicts: Conflict[] = [];
  for (const p of newSet) {
    const path = decode(p);
    if (path[path.length - 1] === ".") continue;
    const live = getAt(liveView, path);
    if (deepEqual(live, getAt(appliedView, path))) continue;
    for (const m of managers) if (m !== me && m.fields.has(p)) conflicts.push({ manager: m, path: p });
  }
  if (conflicts.length > 0 && !opts.force) throw conflictError(conflicts);
  for (const c of conflicts) c.manager.fields.delete(c.path);

  const others = managers.filter((m) => m !== me);
  const ownedByOthers = (p: string): boolean =>
    others.some((m) => [...m.fields].some((q) => q === p || q.startsWith(`${p}\n`) || p.startsWith(`${q}\n`)));
  const dropped = [...oldSet].filter((p) => !newSet.has(p));
  // Deepest first, so that emptied parents can go too.
  dropped.sort((a, b) => decode(b).length - decode(a).length);
  for (const p of dropped) {
    const path = decode(p);
    const target = path[path.length - 1] === "." ? encode(path.slice(0, -1)) : p;
    if (ownedByOthers(target)) continue;
    removeAt(base as unknown as JsonMap, decode(target), (q) => ownedByOthers(encode(q)) || newSet.has(encode(q)));
  }

  const merged = mergeApplied(base as unknown as Json, appliedView) as unknown as KubeObject;
  merged.apiVersion = applied.apiVersion;
  merged.kind = applied.kind;
  for (const k of ["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp"]) {
    if (base.metadata[k] !== undefined) merged.metadata[k] = base.metadata[k];
    else delete merged.metadata[k];
  }
  if (!me) {
    me = {
      manager: opts.manager,
      operation: "Apply",
      apiVersion: applied.apiVersion,
      time: nowTime(),
      fields: new Set(),
    };
    if (opts.subresource) me.subresource = opts.subresource;
    managers.push(me);
  }
  me.fields = newSet;
  me.apiVersion = applied.apiVersion;
  me.time = nowTime();
  writeManagers(merged, managers);
  return merged;
}
