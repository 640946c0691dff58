// managedFields bookkeeping: which manager owns which fields, read from and written to metadata.managedFields.
import type { KubeObject } from "../../../src/kube/object.js";
import {
  decode,
  deepEqual,
  fieldPaths,
  fromFieldsV1,
  getAt,
  toFieldsV1,
  type Json,
  type JsonMap,
} from "./fieldpath.js";

export interface Manager {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  subresource?: string;
  fields: Set<string>;
}

const SERVER_META = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
];

/** The part of an object whose fields are owned: no apiVersion/kind, no server-set metadata. */
export function ownedView(obj: KubeObject, opts: { dropStatus?: boolean } = {}): JsonMap {
  const view: JsonMap = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind" || (k === "status" && opts.dropStatus)) continue;
    if (k === "metadata") {
      const meta: JsonMap = {};
      for (const [mk, mv] of Object.entries(obj.metadata))
        if (!SERVER_META.includes(mk) && mv !== undefined) meta[mk] = mv as Json;
      if (Object.keys(meta).length > 0) view.metadata = meta;
      continue;
    }
    if (v !== undefined) view[k] = v as Json;
  }
  return view;
}

export function nowTime(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

export function readManagers(obj: KubeObject | undefined): Manager[] {
  const list = (obj?.metadata.managedFields ?? []) as Array<Record<string, unknown>>;
  return list.map((e) => {
    const m: Manager = {
      manager: String(e.manager ?? ""),
      operation: e.operation === "Apply" ? "Apply" : "Update",
      apiVersion: String(e.apiVersion ?? obj!.apiVersion),
      time: String(e.time ?? nowTime()),
      fields: fromFieldsV1(e.fieldsV1),
    };
    if (typeof e.subresource === "string" && e.subresource) m.subresource = e.subresource;
    return m;
  });
}

/** Writes the managers (those owning at least one field) into metadata.managedFields, in place. */
export function writeManagers(obj: KubeObject, managers: Manager[]): void {
  const entries = managers
    .filter((m) => m.fields.size > 0)
    .map((m) => {
      const e: Record<string, unknown> = {
        manager: m.manager,
        operation: m.operation,
        apiVersion: m.apiVersion,
        time: m.time,
        fieldsType: "FieldsV1",
        fieldsV1: toFieldsV1(m.fields),
      };
      if (m.subresource) e.subresource = m.subresource;
      return e;
    });
  if (entries.length > 0) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

export function findManager(
  managers: Manager[],
  name: string,
  operation: Manager["operation"],
  subresource?: string,
): Manager | undefined {
  return managers.find(
    (m) => m.manager === name && m.operation === operation && (m.subresource ?? "") === (subresource ?? ""),
  );
}

/**
 * Records a non-apply write (create, update, patch): the writing manager takes the fields whose values
 * it changed, other managers lose them, and fields that no longer exist are owned by no one.
 */
export function trackUpdate(
  oldObj: KubeObject | undefined,
  newObj: KubeObject,
  manager: string,
  subresource?: string,
): void {
  const managers = readManagers(oldObj);
  const newView = ownedView(newObj);
  const oldView = oldObj ? ownedView(oldObj) : {};
  const newPaths = fieldPaths(newView);
  const changed = new Set<string>();
  for (const p of newPaths) {
    const path = decode(p);
    const before = getAt(oldView, path);
    if (before === undefined || (path[path.length - 1] !== "." && !deepEqual(before, getAt(newView, path))))
      changed.add(p);
  }
  let me = findManager(managers, manager, "Update", subresource);
  for (const m of managers) {
    for (const p of [...m.fields]) if (!newPaths.has(p) || (m !== me && changed.has(p))) m.fields.delete(p);
  }
  if (changed.size > 0) {
    if (!me) {
      me = { manager, operation: "Update", apiVersion: newObj.apiVersion, time: nowTime(), fields: new Set() };
      if (subresource) me.subresource = subresource;
      managers.push(me);
    }
    for (const p of changed) me.fields.add(p);
    me.time = nowTime();
  }
  writeManagers(newObj, managers);
}

/** The default field manager of a request: the fieldManager parameter or the User-Agent up to its first "/". */
export function defaultManager(fieldManager: string | null, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const ua = (userAgent ?? "unknown").split("/")[0]!;
  return ua || "unknown";
}
