// The shape of a Kubernetes object as vc handles it: plain JSON, typed only where vc looks.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** What identifies an object on a host: group/kind plus namespace and name. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export function refOf(obj: KubeObject): ObjectRef {
  const ref: ObjectRef = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name };
  if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
  return ref;
}

/** An object holding only its reference (what a reader that GETs or LISTs it by name needs), not the rest of it. */
export function refObject(ref: ObjectRef): KubeObject {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  };
}

/** `group/kind` without the version: the identity of a kind across versions ("apps/StatefulSet", "Namespace"). */
export function groupKind(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

/** A stable, readable key of an object: `group/Kind/namespace/name` (namespace empty when cluster-scoped). */
export function objectKey(ref: ObjectRef | KubeObject): string {
  const r = "metadata" in ref ? refOf(ref as KubeObject) : (ref as ObjectRef);
  return `${groupKind(r.apiVersion, r.kind)}/${r.namespace ?? ""}/${r.name}`;
}

/** A short human label of an object: `Kind namespace/name`. */
export function describeRef(ref: ObjectRef | KubeObject): string {
  const r = "metadata" in ref ? refOf(ref as KubeObject) : (ref as ObjectRef);
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}

/** The object without metadata.managedFields (a copy of its top and metadata; the object itself when it has none). */
export function withoutManagedFields<T>(o: T): T {
  const metadata = (o as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!metadata || typeof metadata !== "object" || !("managedFields" in metadata)) return o;
  const { managedFields: _, ...rest } = metadata;
  return { ...o, metadata: rest };
}
