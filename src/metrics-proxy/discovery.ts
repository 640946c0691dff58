// The discovery documents clients read before calling the metrics API: /api, /api/v1, /apis, /apis/<group>,
// /apis/<group>/v1beta1,
// /version, and /api and /apis as aggregated discovery (apidiscovery.k8s.io v2 and v2beta1 APIGroupDiscoveryList),
// which
// aggregators from 1.26 on fetch from every APIService's server and kubectl reads instead of the per-version lists.

export const METRICS_VERSION = "v1beta1";

const VERBS = ["get", "list"];

/** The group and kind of aggregated discovery (k8s.io/api apidiscovery); served in these versions, preferred first. */
export const AGGREGATED_GROUP = "apidiscovery.k8s.io";
export const AGGREGATED_KIND = "APIGroupDiscoveryList";
export const AGGREGATED_VERSIONS = ["v2", "v2beta1"] as const;
export type AggregatedVersion = (typeof AGGREGATED_VERSIONS)[number];

/** One resource as a legacy APIResourceList has it (the shape both forms are built from). */
interface LegacyResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
}

export function apiVersions(serverAddress: string) {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/**
 * The core group, read-only: the synced nodes `kubectl top node` reads capacity from, and the cluster's
 * pods `kubectl top pod` lists when no metrics come back.
 */
export function coreResources() {
  return { kind: "APIResourceList", groupVersion: "v1", resources: CORE_RESOURCES };
}

const CORE_RESOURCES: LegacyResource[] = [
  { name: "nodes", singularName: "node", namespaced: false, kind: "Node", verbs: VERBS, shortNames: ["no"] },
  { name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: VERBS, shortNames: ["po"] },
];

function groupVersion(group: string) {
  return { groupVersion: `${group}/${METRICS_VERSION}`, version: METRICS_VERSION };
}

export function apiGroup(group: string) {
  return {
    kind: "APIGroup",
    apiVersion: "v1",
    name: group,
    versions: [groupVersion(group)],
    preferredVersion: groupVersion(group),
  };
}

export function apiGroupList(group: string) {
  const { kind: _k, apiVersion: _a, ...g } = apiGroup(group);
  return { kind: "APIGroupList", apiVersion: "v1", groups: [g] };
}

export function metricsResources(group: string) {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: `${group}/${METRICS_VERSION}`,
    resources: METRICS_RESOURCES,
  };
}

/** As metrics-server lists them: no singular names, read-only. */
const METRICS_RESOURCES: LegacyResource[] = [
  { name: "nodes", singularName: "", namespaced: false, kind: "NodeMetrics", verbs: VERBS },
  { name: "pods", singularName: "", namespaced: true, kind: "PodMetrics", verbs: VERBS },
];

/**
 * An APIResourceDiscovery of a legacy resource, as the API server converts one: the response kind names the kind, its
 * group and version left empty as they are the containing group version's (clients drop a resource without a kind),
 * scope `Cluster` or `Namespaced`, verbs and short names kept.
 */
function resourceDiscovery(r: LegacyResource) {
  return {
    resource: r.name,
    responseKind: { group: "", version: "", kind: r.kind },
    scope: r.namespaced ? "Namespaced" : "Cluster",
    singularResource: r.singularName,
    verbs: r.verbs,
    ...(r.shortNames ? { shortNames: r.shortNames } : {}),
  };
}

/**
 * An APIGroupDiscovery: the group's name ("" for the core group) and its one version, fresh (this server answers it
 * itself).
 */
function groupDiscovery(group: string, version: string, resources: LegacyResource[]) {
  return {
    metadata: group === "" ? {} : { name: group },
    versions: [{ version, resources: resources.map(resourceDiscovery), freshness: "Current" }],
  };
}

/** The items of `/apis` as aggregated discovery: the metrics group with its resources. */
export function aggregatedGroups(group: string): unknown[] {
  return [groupDiscovery(group, METRICS_VERSION, METRICS_RESOURCES)];
}

/** The items of `/api` as aggregated discovery: the core group's read-only nodes and pods. */
export function aggregatedCore(): unknown[] {
  return [groupDiscovery("", "v1", CORE_RESOURCES)];
}

/** An APIGroupDiscoveryList of `version` (v2 and v2beta1 have the same fields). */
export function aggregatedList(version: AggregatedVersion, items: unknown[]) {
  return { kind: AGGREGATED_KIND, apiVersion: `${AGGREGATED_GROUP}/${version}`, metadata: {}, items };
}

/** /version: the proxy names itself; clients only read major and minor. */
export function version() {
  return {
    major: "1",
    minor: "32",
    gitVersion: "v1.32.0+vc-metrics-proxy",
    gitCommit: "",
    gitTreeState: "clean",
    buildDate: "1970-01-01T00:00:00Z",
    goVersion: "",
    compiler: "",
    platform: `${process.platform}/${process.arch}`,
  };
}
