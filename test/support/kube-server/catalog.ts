// The resources the test server serves: the shared kind catalogue plus verbs, categories and the metrics.k8s.io alias.
import {
  RESOURCES,
  apiVersionOf,
  METRICS_GROUP,
  METRICS_VERSION,
  type ResourceType,
} from "../../../src/kube/resources.js";

export interface Served extends ResourceType {
  apiVersion: string;
  verbs: string[];
  categories?: string[];
  /** The List kind, e.g. "PodList". */
  listKind: string;
  /** Served for create only and never stored (access reviews). */
  createOnly?: boolean;
}

const WRITE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const READ_VERBS = ["get", "list"];
const ALL_CATEGORY = new Set(["Pod", "Service", "Deployment", "StatefulSet"]);

const METRICS_K8S_GROUP = "metrics.k8s.io";

function served(r: ResourceType): Served {
  const s: Served = {
    ...r,
    apiVersion: apiVersionOf(r),
    verbs: r.readOnly ? READ_VERBS : WRITE_VERBS,
    listKind: `${r.kind}List`,
  };
  if (ALL_CATEGORY.has(r.kind) && r.group !== METRICS_GROUP) s.categories = ["all"];
  return s;
}

/** SelfSubjectAccessReview, which `kubectl auth can-i` and permission checks create. */
const ACCESS_REVIEW: Served = {
  group: "authorization.k8s.io",
  version: "v1",
  apiVersion: "authorization.k8s.io/v1",
  kind: "SelfSubjectAccessReview",
  plural: "selfsubjectaccessreviews",
  singular: "selfsubjectaccessreview",
  namespaced: false,
  verbs: ["create"],
  listKind: "SelfSubjectAccessReviewList",
  createOnly: true,
};

/**
 * SubjectAccessReview (may this user or group?), which permission checks such as vc doctor's create; needs `create` on
 * it.
 */
const SUBJECT_ACCESS_REVIEW: Served = {
  ...ACCESS_REVIEW,
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  singular: "subjectaccessreview",
  listKind: "SubjectAccessReviewList",
};

/** LocalSubjectAccessReview: a SubjectAccessReview created in the namespace it asks about. */
const LOCAL_SUBJECT_ACCESS_REVIEW: Served = {
  ...ACCESS_REVIEW,
  kind: "LocalSubjectAccessReview",
  plural: "localsubjectaccessreviews",
  singular: "localsubjectaccessreview",
  namespaced: true,
  listKind: "LocalSubjectAccessReviewList",
};

/** SelfSubjectReview, which `kubectl auth whoami` creates. */
const SELF_REVIEW: Served = {
  group: "authentication.k8s.io",
  version: "v1",
  apiVersion: "authentication.k8s.io/v1",
  kind: "SelfSubjectReview",
  plural: "selfsubjectreviews",
  singular: "selfsubjectreview",
  namespaced: false,
  verbs: ["create"],
  listKind: "SelfSubjectReviewList",
  createOnly: true,
};

/** TokenReview (who does this token name?), which servers that take bearer tokens create; needs `create` on it. */
const TOKEN_REVIEW: Served = {
  ...SELF_REVIEW,
  kind: "TokenReview",
  plural: "tokenreviews",
  singular: "tokenreview",
  listKind: "TokenReviewList",
};

/** Every served resource; the metrics kinds appear under both metrics.orch.io and metrics.k8s.io. */
const SERVED: readonly Served[] = [
  ...RESOURCES.map(served),
  ...RESOURCES.filter((r) => r.group === METRICS_GROUP).map((r) =>
    served({ ...r, group: METRICS_K8S_GROUP, version: METRICS_VERSION }),
  ),
  ACCESS_REVIEW,
  SUBJECT_ACCESS_REVIEW,
  LOCAL_SUBJECT_ACCESS_REVIEW,
  SELF_REVIEW,
  TOKEN_REVIEW,
];

export function isMetricsGroup(group: string): boolean {
  return group === METRICS_GROUP || group === METRICS_K8S_GROUP;
}

const byPath = new Map(SERVED.map((r) => [`${r.group}/${r.version}/${r.plural}`, r]));
const byKind = new Map(SERVED.map((r) => [`${r.apiVersion}/${r.kind}`, r]));

export function servedByPlural(group: string, version: string, plural: string): Served | undefined {
  return byPath.get(`${group}/${version}/${plural}`);
}

export function servedByKind(apiVersion: string, kind: string): Served | undefined {
  return byKind.get(`${apiVersion}/${kind}`);
}

/** group -> versions served, in catalogue order. */
export function groupVersions(): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const r of SERVED) {
    const versions = groups.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    groups.set(r.group, versions);
  }
  return groups;
}

export function resourcesIn(group: string, version: string): Served[] {
  return SERVED.filter((r) => r.group === group && r.version === version);
}
