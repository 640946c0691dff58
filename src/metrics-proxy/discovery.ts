// The discovery documents clients read before calling the metrics API: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/v1beta1, /version.

export const METRICS_VERSION = "v1beta1";

const VERBS = ["get", "list"];

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
  return {
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      { name: "nodes", singularName: "node", namespaced: false, kind: "Node", verbs: VERBS, shortNames: ["no"] },
      { name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: VERBS, shortNames: ["po"] },
    ],
  };
}

function groupVersion(group: string) {
  return { groupVersion: `${group}/${METRICS_VERSION}`, version: METRICS_VERSION };
}

export function apiGroup(group: string) {
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions: [groupVersion(group)], preferredVersion: groupVersion(group) };
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
    resources: [
      { name: "nodes", singularName: "", namespaced: false, kind: "NodeMetrics", verbs: VERBS },
      { name: "pods", singularName: "", namespaced: true, kind: "PodMetrics", verbs: VERBS },
    ],
  };
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
