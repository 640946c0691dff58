// Server-set metadata and defaults: uid, creationTimestamp, generation (workloads and custom kinds), namespace phase,
// secret type, service cluster IPs.
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../../src/kube/object.js";
import type { Served } from "./catalog.js";
import { deepEqual } from "./fieldpath.js";

let nextIp = 1;

/** Kinds whose objects carry metadata.generation upstream (workloads and custom resources); core kinds do not. */
const GENERATION_GROUPS = new Set(["apps", "networking.mesh.io", "cert-manager.io"]);

function tracksGeneration(served: Served): boolean {
  return GENERATION_GROUPS.has(served.group);
}

function nowStamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

const BUILT_IN_GROUPS = new Set([
  "",
  "apps",
  "rbac.authorization.k8s.io",
  "coordination.k8s.io",
  "apiregistration.k8s.io",
]);

function isEmpty(v: unknown): boolean {
  return v !== null && typeof v === "object" && Object.keys(v).length === 0;
}

/**
 * Drops what Go's omitempty drops on built-in kinds: empty metadata maps and lists, and empty top-level data maps
 * (kubectl's client-side apply sends `annotations: {}`, which a real server never stores).
 */
function normalize(obj: KubeObject, served: Served): KubeObject {
  for (const k of ["labels", "annotations", "ownerReferences", "finalizers", "managedFields"])
    if (isEmpty(obj.metadata[k])) delete obj.metadata[k];
  if (BUILT_IN_GROUPS.has(served.group))
    for (const k of ["data", "binaryData", "stringData"]) if (isEmpty(obj[k])) delete obj[k];
  return obj;
}

/** Fills what the server sets on create (in place). */
export function prepareCreate(obj: KubeObject, served: Served): KubeObject {
  obj.apiVersion = served.apiVersion;
  obj.kind = served.kind;
  if (!served.namespaced) delete obj.metadata.namespace;
  obj.metadata.uid = randomUUID();
  obj.metadata.creationTimestamp = nowStamp();
  if (tracksGeneration(served)) obj.metadata.generation = 1;
  else delete obj.metadata.generation;
  delete obj.metadata.resourceVersion;
  delete obj.metadata.deletionTimestamp;
  applyDefaults(obj, served);
  return normalize(obj, served);
}

function applyDefaults(obj: KubeObject, served: Served): void {
  if (served.group === "" && served.kind === "Namespace") {
    obj.status = { phase: "Active" };
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), "kubernetes.io/metadata.name": obj.metadata.name };
  }
  if (served.group === "" && served.kind === "Secret" && !obj.type) obj.type = "Opaque";
  if (served.group === "" && served.kind === "Service") {
    const spec = (obj.spec ??= {}) as Record<string, unknown>;
    spec.type ??= "ClusterIP";
    if (spec.clusterIP === undefined && spec.type !== "ExternalName") {
      const n = nextIp++;
      spec.clusterIP = `10.96.${(n >> 8) & 255}.${n & 255}`;
      spec.clusterIPs = [spec.clusterIP];
    }
  }
}

function specPart(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/**
 * Carries server-owned fields from the live object to an update (in place): uid, creationTimestamp, and
 * generation (bumped when anything but metadata and status changed). For a main-resource write of a kind
 * with a status subresource the live status is kept; a status write keeps everything but status.
 */
export function prepareUpdate(next: KubeObject, live: KubeObject, served: Served, subresource?: string): KubeObject {
  next.apiVersion = served.apiVersion;
  next.kind = served.kind;
  if (subresource === "status") {
    const status = next.status;
    const kept = structuredClone(live);
    if (status === undefined) delete kept.status;
    else kept.status = status;
    // An apply to status brings its own managedFields; other status writes are tracked afterwards.
    if (next.metadata.managedFields !== undefined) kept.metadata.managedFields = next.metadata.managedFields;
    return kept;
  }
  next.metadata.uid = live.metadata.uid;
  next.metadata.creationTimestamp = live.metadata.creationTimestamp;
  if (!served.namespaced) delete next.metadata.namespace;
  else next.metadata.namespace = live.metadata.namespace;
  if (served.subresources?.includes("status")) {
    if (live.status === undefined) delete next.status;
    else next.status = structuredClone(live.status);
  }
  if (served.kind === "Namespace" && served.group === "") {
    next.metadata.labels = { ...(next.metadata.labels ?? {}), "kubernetes.io/metadata.name": next.metadata.name };
  }
  if (served.kind === "Service" && served.group === "") {
    const spec = (next.spec ??= {}) as Record<string, unknown>;
    const liveSpec = (live.spec ?? {}) as Record<string, unknown>;
    spec.type ??= liveSpec.type ?? "ClusterIP";
    if (spec.clusterIP === undefined && liveSpec.clusterIP !== undefined) {
      spec.clusterIP = liveSpec.clusterIP;
      spec.clusterIPs = liveSpec.clusterIPs;
    }
  }
  if (tracksGeneration(served)) {
    const gen = typeof live.metadata.generation === "number" ? live.metadata.generation : 1;
    next.metadata.generation = deepEqual(specPart(next), specPart(live)) ? gen : gen + 1;
  } else delete next.metadata.generation;
  delete next.metadata.deletionTimestamp;
  return normalize(next, served);
}
