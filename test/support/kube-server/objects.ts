// Object operations behind the REST verbs: get, list, create, update, patch (merge/JSON/strategic/apply), delete with
// propagation.
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../../src/kube/object.js";
import { serverSideApply } from "./apply.js";
import { servedByKind, type Served } from "./catalog.js";
import { deepEqual, type Json } from "./fieldpath.js";
import { querySelectors } from "./fields.js";
import { parseBody } from "./http.js";
import { trackUpdate } from "./managed.js";
import { checkImmutable } from "./immutable.js";
import type { Profile } from "./profile.js";
import { prepareCreate, prepareUpdate } from "./meta.js";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js";
import { alreadyExists, ApiError, badRequest, conflict, notFound } from "./status.js";
import type { Entry, Store } from "./store.js";
import { checkDataSize, validateObject } from "./validate.js";

export function kindKey(served: Pick<Served, "apiVersion" | "kind">): string {
  return `${served.apiVersion}/${served.kind}`;
}

export interface WriteOptions {
  manager: string;
  dryRun?: boolean;
  subresource?: string;
  /** Admission of the object about to be stored (dry runs included): throws to refuse it (e.g. RBAC escalation). */
  admit?: (obj: KubeObject) => void;
}

export interface ListResult {
  entries: Entry[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml",
  "application/apply-patch+cbor",
];

function sortKey(e: Entry): string {
  return `${e.obj.metadata.namespace ?? ""}/${e.obj.metadata.name}`;
}

/** True when two versions differ at most in resourceVersion and managedFields timestamps (a no-op write). */
function sameButVolatile(a: KubeObject, b: KubeObject): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (k !== "metadata" && !deepEqual(a[k], b[k])) return false;
  const mk = new Set([...Object.keys(a.metadata), ...Object.keys(b.metadata)]);
  for (const k of mk) {
    if (k === "resourceVersion") continue;
    if (k === "managedFields") {
      const ma = (a.metadata.managedFields ?? []) as Array<Record<string, unknown>>;
      const mb = (b.metadata.managedFields ?? []) as Array<Record<string, unknown>>;
      if (
        ma.length !== mb.length ||
        ma.some((m, i) => !deepEqual({ ...m, time: undefined }, { ...mb[i], time: undefined }))
      )
        return false;
    } else if (!deepEqual(a.metadata[k], b.metadata[k])) return false;
  }
  return true;
}

export class Objects {
  constructor(
    private readonly store: Store,
    private readonly profile: Profile = "current",
  ) {}

  get(served: Served, ns: string | undefined, name: string): Entry {
    const e = this.store.get(kindKey(served), served.namespaced ? (ns ?? "") : "", name);
    if (!e) throw notFound(served.plural, served.group, name);
    return e;
  }

  /** Snapshots of paged lists, so that continue pages are consistent (as upstream) and cheap. */
  private readonly snapshots = new Map<string, { query: string; keyed: Entry[] }>();

  /** Selected objects sorted by namespace/name, paged by `limit` and `continue`. */
  list(served: Served, ns: string | undefined, query: URLSearchParams): ListResult {
    const limitText = query.get("limit");
    const limit = limitText ? Number(limitText) : 0;
    if (limitText && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`invalid limit: ${limitText}`);
    const token = query.get("continue");
    const scopeKey = `${kindKey(served)}|${ns ?? ""}|${query.get("labelSelector") ?? ""}|${query.get("fieldSelector") ?? ""}`;
    let rv = String(this.store.resourceVersion);
    let start = 0;
    let keyed: Entry[] | undefined;
    let snapshotId: string | undefined;
    let after: string | undefined;
    if (token) {
      let decoded: { rv?: string; start?: string; snap?: string };
      try {
        decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as typeof decoded;
      } catch {
        throw badRequest("continue key is not valid: illegal base64 data");
      }
      if (typeof decoded !== "object" || decoded === null || typeof decoded.start !== "string")
        throw badRequest("continue key is not valid: missing start key");
      rv = decoded.rv ?? rv;
      after = decoded.start;
      const snap = decoded.snap ? this.snapshots.get(decoded.snap) : undefined;
      if (snap && snap.query === scopeKey) {
        keyed = snap.keyed;
        snapshotId = decoded.snap;
      }
    }
    keyed ??= this.select(served, ns, query);
    if (after !== undefined) {
      let lo = 0;
      let hi = keyed.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sortKey(keyed[mid]!) <= after) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const end = limit > 0 ? Math.min(keyed.length, start + limit) : keyed.length;
    const result: ListResult = {
      entries: start === 0 && end === keyed.length ? keyed : keyed.slice(start, end),
      resourceVersion: rv,
    };
    if (end < keyed.length) {
      if (!snapshotId) {
        snapshotId = randomUUID();
        this.snapshots.set(snapshotId, { query: scopeKey, keyed });
        if (this.snapshots.size > 16) this.snapshots.delete(this.snapshots.keys().next().value!);
      }
      result.continue = Buffer.from(JSON.stringify({ rv, start: sortKey(keyed[end - 1]!), snap: snapshotId })).toString(
        "base64url",
      );
      result.remainingItemCount = keyed.length - end;
    } else if (snapshotId) this.snapshots.delete(snapshotId);
    return result;
  }

  /** The selected entries, sorted by namespace/name (the store keeps the sorted order per kind). */
  private select(served: Served, ns: string | undefined, query: URLSearchParams): Entry[] {
    const { labels: match, fields } = querySelectors(served.kind, query);
    const all = this.store.sorted(kindKey(served), served.namespaced ? ns : undefined);
    if (!query.get("labelSelector") && !query.get("fieldSelector")) return all as Entry[];
    const out: Entry[] = [];
    for (const e of all) if (match(e.obj.metadata.labels) && fields(e.obj)) out.push(e);
    return out;
  }

  private requireNamespace(served: Served, ns: string | undefined): void {
    if (!served.namespaced) return;
    if (!ns) throw badRequest("the server could not find the requested resource: a namespace is required");
    if (!this.store.get("v1/Namespace", "", ns)) throw notFound("namespaces", "", ns);
  }

  create(served: Served, ns: string | undefined, body: unknown, opts: WriteOptions): KubeObject {
    if (body && typeof body === "object" && !Array.isArray(body)) {
      const meta = (body as KubeObject).metadata;
      if (meta && !meta.name && typeof meta.generateName === "string")
        meta.name = `${meta.generateName}${Math.random().toString(36).slice(2, 7)}`;
    }
    validateObject(body, served, served.namespaced ? ns : undefined);
    const obj = structuredClone(body);
    if (served.namespaced) obj.metadata.namespace = ns ?? obj.metadata.namespace;
    this.requireNamespace(served, obj.metadata.namespace);
    if (this.store.get(kindKey(served), obj.metadata.namespace ?? "", obj.metadata.name))
      throw alreadyExists(served.plural, served.group, obj.metadata.name);
    prepareCreate(obj, served);
    delete obj.metadata.managedFields;
    trackUpdate(undefined, obj, opts.manager);
    opts.admit?.(obj);
    if (opts.dryRun) return obj;
    return this.store.commit(kindKey(served), "ADDED", obj).obj;
  }

  /** Replaces an object (PUT); a stale resourceVersion is a 409. */
  update(served: Served, ns: string | undefined, name: string, body: unknown, opts: WriteOptions): KubeObject {
    validateObject(body, served, served.namespaced ? ns : undefined, name);
    const live = this.get(served, ns, name).obj;
    const next = structuredClone(body);
    const rv = next.metadata.resourceVersion;
    if (rv !== undefined && rv !== "" && rv !== live.metadata.resourceVersion) {
      throw conflict(
        served.plural,
        served.group,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
      );
    }
    if (next.metadata.uid !== undefined && next.metadata.uid !== live.metadata.uid) {
      throw conflict(
        served.plural,
        served.group,
        name,
        `Precondition failed: UID in precondition: ${String(next.metadata.uid)}, UID in object meta: ` +
          `${live.metadata.uid}`,
      );
    }
    if (next.metadata.managedFields === undefined) next.metadata.managedFields = live.metadata.managedFields;
    return this.commitUpdate(served, live, next, opts, true);
  }

  private commitUpdate(
    served: Served,
    live: KubeObject,
    next: KubeObject,
    opts: WriteOptions,
    track: boolean,
  ): KubeObject {
    const prepared = prepareUpdate(next, live, served, opts.subresource);
    if (opts.subresource === undefined) checkImmutable(served, prepared, live, this.profile);
    if (track) trackUpdate(live, prepared, opts.manager, opts.subresource);
    prepared.metadata.resourceVersion = live.metadata.resourceVersion;
    if (sameButVolatile(prepared, live)) return live;
    opts.admit?.(prepared);
    if (opts.dryRun) return prepared;
    return this.store.commit(kindKey(served), "MODIFIED", prepared).obj;
  }

  /** PATCH of every kind; apply creates a missing object. Returns the object and whether it was created. */
  patch(
    served: Served,
    ns: string | undefined,
    name: string,
    contentType: string,
    text: string,
    opts: WriteOptions & { force?: boolean; fieldManager?: string | null },
  ): { obj: KubeObject; created: boolean } {
    const type = contentType.split(";")[0]!.trim().toLowerCase();
    if (!PATCH_TYPES.includes(type))
      throw new ApiError(
        415,
        `the body of the request was in an unknown format - accepted media types include: ` +
          `${PATCH_TYPES.slice(0, 4).join(", ")}`,
        "UnsupportedMediaType",
      );
    if (type === "application/apply-patch+yaml" || type === "application/apply-patch+cbor") {
      if (!opts.fieldManager) throw badRequest("PATCH, application/apply-patch+yaml requires fieldManager to be set");
      return this.apply(served, ns, name, parseBody(text, true), { ...opts, manager: opts.fieldManager });
    }
    const body = parseBody(text);
    const live = this.get(served, ns, name).obj;
    let patched: Json;
    if (type === "application/json-patch+json") patched = jsonPatch(live as unknown as Json, body);
    else if (type === "application/merge-patch+json")
      patched = mergePatch(structuredClone(live) as unknown as Json, body as Json);
    else patched = strategicMergePatch(structuredClone(live) as unknown as Json, body as Json);
    const next = patched as unknown as KubeObject;
    if (
      typeof next !== "object" ||
      next === null ||
      Array.isArray(next) ||
      typeof next.metadata !== "object" ||
      next.metadata === null
    )
      throw badRequest("the patch produced an object without metadata");
    if (next.metadata.name !== name) throw badRequest("the name of the object cannot be changed by a patch");
    if (served.namespaced && next.metadata.namespace !== live.metadata.namespace)
      throw badRequest("the namespace of the object cannot be changed by a patch");
    validateObject(next, served, served.namespaced ? ns : undefined, name);
    const rv = next.metadata.resourceVersion;
    if (rv !== undefined && rv !== live.metadata.resourceVersion)
      throw conflict(
        served.plural,
        served.group,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
      );
    return { obj: this.commitUpdate(served, live, next, opts, true), created: false };
  }

  private apply(
    served: Served,
    ns: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions & { force?: boolean },
  ): { obj: KubeObject; created: boolean } {
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw badRequest("the applied configuration must be an object");
    const cfg = body as KubeObject;
    if (!cfg.apiVersion || !cfg.kind) throw badRequest("apiVersion and kind are required in an applied configuration");
    if (cfg.metadata && cfg.metadata.name === undefined) cfg.metadata.name = name;
    validateObject(cfg, served, served.namespaced ? ns : undefined, name);
    if (served.namespaced) cfg.metadata.namespace = ns;
    const entry = this.store.get(kindKey(served), served.namespaced ? (ns ?? "") : "", name);
    const live = entry?.obj;
    if (
      live &&
      cfg.metadata.resourceVersion !== undefined &&
      cfg.metadata.resourceVersion !== live.metadata.resourceVersion
    ) {
      throw conflict(
        served.plural,
        served.group,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
      );
    }
    if (!live && opts.subresource) throw notFound(served.plural, served.group, name);
    const merged = serverSideApply(live, cfg, {
      manager: opts.manager,
      force: !!opts.force,
      subresource: opts.subresource,
    });
    checkDataSize(merged, served);
    if (!live) {
      this.requireNamespace(served, ns);
      const managed = merged.metadata.managedFields;
      prepareCreate(merged, served);
      merged.metadata.managedFields = managed;
      opts.admit?.(merged);
      if (opts.dryRun) return { obj: merged, created: true };
      return { obj: this.store.commit(kindKey(served), "ADDED", merged).obj, created: true };
    }
    return { obj: this.commitUpdate(served, live, merged, opts, false), created: false };
  }

  /**
   * Deletes an object with propagation (Background/Foreground: dependents too, synchronously; Orphan: owner references
   * dropped).
   */
  delete(
    served: Served,
    ns: string | undefined,
    name: string,
    opts: { propagationPolicy?: string; dryRun?: boolean; preconditions?: { uid?: string; resourceVersion?: string } },
  ): KubeObject {
    const live = this.get(served, ns, name).obj;
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== live.metadata.uid)
      throw conflict(
        served.plural,
        served.group,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${live.metadata.uid}`,
      );
    if (pre.resourceVersion && pre.resourceVersion !== live.metadata.resourceVersion) {
      throw conflict(
        served.plural,
        served.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object ` +
          `meta: ${live.metadata.resourceVersion}`,
      );
    }
    const policy = opts.propagationPolicy ?? "Background";
    if (!["Background", "Foreground", "Orphan"].includes(policy))
      throw new ApiError(
        422,
        `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported ` +
          `values: "Foreground", "Background", "Orphan", "nil"`,
        "Invalid",
      );
    if (opts.dryRun) return live;
    this.deleteTree(kindKey(served), live, policy);
    return live;
  }

  private deleteTree(key: string, obj: KubeObject, policy: string): void {
    const uid = String(obj.metadata.uid ?? "");
    this.store.commit(key, "DELETED", structuredClone(obj));
    if (key === "v1/Namespace") {
      for (const k of this.store.kindKeys()) {
        for (const e of [...this.store.entries(k, obj.metadata.name)]) this.deleteTree(k, e.obj, "Background");
      }
    }
    for (const [depKey, depNs, depName] of this.store.dependents(uid)) {
      const dep = this.store.get(depKey, depNs, depName);
      if (!dep) continue;
      if (policy === "Orphan") {
        const next = structuredClone(dep.obj);
        next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
        if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
        this.store.commit(depKey, "MODIFIED", next);
      } else {
        const remaining = (dep.obj.metadata.ownerReferences ?? []).filter(
          (r) => r.uid !== uid && this.ownerExists(r, depNs),
        );
        if (remaining.length === 0) this.deleteTree(depKey, dep.obj, policy);
        else {
          const next = structuredClone(dep.obj);
          next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
          this.store.commit(depKey, "MODIFIED", next);
        }
      }
    }
  }

  private ownerExists(ref: { apiVersion: string; kind: string; name: string; uid: string }, ns: string): boolean {
    const served = servedByKind(ref.apiVersion, ref.kind);
    if (!served) return false;
    const e = this.store.get(kindKey(served), served.namespaced ? ns : "", ref.name);
    return !!e && e.obj.metadata.uid === ref.uid;
  }
}
