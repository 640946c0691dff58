import type { Served } from "./catalog.js";
import { badRequest } from "./status.js";

export type Profile = "1.20" | "current";
export const PROFILES: readonly Profile[] = ["1.20", "current"];

/** The profile of servers started without one: `VC_KUBE_PROFILE`, else current. */
export function defaultProfile(): Profile {
  const env = process.env.VC_KUBE_PROFILE;
  return env === "1.20" || env === "current" ? env : "current";
}

export interface ProfileFacts {
  version: { major: string; minor: string; gitVersion: string };
  /** SelfSubjectReview (authentication.k8s.io/v1, `kubectl auth whoami`): from 1.28. */
  selfSubjectReview: boolean;
  /** /api and /apis as APIGroupDiscoveryList when asked by Accept: from 1.26 (v2 from 1.30). */
  aggregatedDiscovery: boolean;
  /** `fieldValidation` honoured (Strict refuses, Warn and the default warn and drop): from 1.25. 1.20 ignores it. */
  fieldValidation: boolean;
  /** /openapi/v3 (and its group-version documents): from 1.23 (1.20 answers 404). */
  openApiV3: boolean;
  /** The Content-Type of /openapi/v2 asked for as protobuf (1.20's kube-openapi answers application/octet-stream). */
  openApiV2ContentType: string;
  /** The updatable StatefulSet spec fields its 422 lists (1.20: three; 1.36: seven). */
  statefulSetUpdatable: string[];
  /**
   * The resource a binding to a missing role is refused for (404 NotFound, `details.kind`): 1.20 names the role's
   * resource (`roles`, `clusterroles`), 1.36 the binding's (`rolebindings`, `clusterrolebindings`).
   */
  missingRoleNames: "role" | "binding";
}

export const FACTS: Record<Profile, ProfileFacts> = {
  "1.20": {
    version: { major: "1", minor: "20", gitVersion: "v1.20.2" },
    selfSubjectReview: false,
    aggregatedDiscovery: false,
    fieldValidation: false,
    openApiV3: false,
    openApiV2ContentType: "application/octet-stream",
    statefulSetUpdatable: ["replicas", "template", "updateStrategy"],
    missingRoleNames: "role",
  },
  current: {
    version: { major: "1", minor: "36", gitVersion: "v1.36.2" },
    selfSubjectReview: true,
    aggregatedDiscovery: true,
    fieldValidation: true,
    openApiV3: true,
    openApiV2ContentType: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    statefulSetUpdatable: [
      "replicas",
      "ordinals",
      "template",
      "updateStrategy",
      "revisionHistoryLimit",
      "persistentVolumeClaimRetentionPolicy",
      "minReadySeconds",
    ],
    missingRoleNames: "binding",
  },
};

/**
 * Top-level fields each kind declares (besides apiVersion, kind, metadata); a kind not listed declares spec and status.
 */
const TOP_LEVEL: Record<string, string[]> = {
  ConfigMap: ["data", "binaryData", "immutable"],
  Secret: ["data", "stringData", "type", "immutable"],
  ServiceAccount: ["secrets", "imagePullSecrets", "automountServiceAccountToken"],
  Role: ["rules"],
  ClusterRole: ["rules", "aggregationRule"],
  RoleBinding: ["subjects", "roleRef"],
  ClusterRoleBinding: ["subjects", "roleRef"],
  Event: [
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "series",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
  ],
};
const METADATA = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

/**
 * Custom resources (the mesh's and cert-manager's kinds, served here without a CRD object) word unknown fields by path.
 */
const CUSTOM_GROUPS = new Set(["networking.mesh.io", "cert-manager.io"]);

/** The unknown fields of a written object, as paths (`bogus`, `metadata.bogus`). */
function unknownFields(served: Served, obj: unknown): string[] {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) return [];
  const declared = new Set(["apiVersion", "kind", "metadata", ...(TOP_LEVEL[served.kind] ?? ["spec", "status"])]);
  // Strategic merge patch directives ($patch, $setElementOrder/...) are not fields.
  const out = Object.keys(obj).filter((k) => !declared.has(k) && !k.startsWith("$"));
  const meta = (obj as { metadata?: unknown }).metadata;
  if (typeof meta === "object" && meta !== null && !Array.isArray(meta)) {
    for (const k of Object.keys(meta)) if (!METADATA.has(k) && !k.startsWith("$")) out.push(`metadata.${k}`);
  }
  return out.sort();
}

/** How the server words one unknown field: a custom resource by its schema path, a built-in kind by decoding. */
function unknownFieldText(served: Served, field: string): string {
  return CUSTOM_GROUPS.has(served.group) ? `.${field}: field not declared in schema` : `unknown field "${field}"`;
}

/**
 * Server-side field validation of a write (current profile): `Strict` refuses unknown fields (400), `Ignore` drops them
 * silently, `Warn` and no value drop them with one Warning each. Returns the warnings and removes the fields from
 * `obj`.
 */
export function validateFields(served: Served, obj: unknown, mode: string | null): string[] {
  const unknown = unknownFields(served, obj);
  if (unknown.length === 0) return [];
  if (mode === "Strict") {
    const texts = unknown.map((f) => unknownFieldText(served, f));
    throw badRequest(CUSTOM_GROUPS.has(served.group) ? texts.join(", ") : `strict decoding error: ${texts.join(", ")}`);
  }
  const o = obj as Record<string, unknown> & { metadata?: Record<string, unknown> };
  for (const f of unknown) {
    if (f.startsWith("metadata.")) delete o.metadata![f.slice("metadata.".length)];
    else delete o[f];
  }
  return mode === "Ignore" ? [] : unknown.map((f) => unknownFieldText(served, f));
}

/** A `Warning` header value as the API server writes it (RFC 7234, code 299, no agent). */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}
