// Discovery documents: /version, /api, /apis, group and group-version resource lists, and aggregated discovery v2.
import { groupVersions, resourcesIn, type Served } from "./catalog.js";
import { FACTS, type Profile } from "./profile.js";

export const AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

export function versionInfo(profile: Profile): Record<string, string> {
  return {
    ...FACTS[profile].version,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2024-12-11T00:00:00Z",
    goVersion: "go1.23.4",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/** Whether the server serves an API group now (the metrics API can be switched off, CRD groups left uninstalled). */
export type Serves = (group: string) => boolean;

function groups(serves: Serves): Array<[string, string[]]> {
  return [...groupVersions()].filter(([g]) => g !== "" && serves(g));
}

function groupDoc(name: string, versions: string[]): Record<string, unknown> {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiVersions(hostPort: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: hostPort }],
  };
}

export function apiGroupList(serves: Serves): Record<string, unknown> {
  return { kind: "APIGroupList", apiVersion: "v1", groups: groups(serves).map(([g, vs]) => groupDoc(g, vs)) };
}

export function apiGroup(group: string, serves: Serves): Record<string, unknown> | undefined {
  const found = groups(serves).find(([g]) => g === group);
  return found ? { kind: "APIGroup", apiVersion: "v1", ...groupDoc(found[0], found[1]) } : undefined;
}

const SUB_VERBS = { status: ["get", "patch", "update"], scale: ["get", "patch", "update"], log: ["get"] } as const;

function subKind(r: Served, sub: string): { group: string; version: string; kind: string } {
  if (sub === "scale") return { group: "autoscaling", version: "v1", kind: "Scale" };
  return { group: r.group, version: r.version, kind: r.kind };
}

export function apiResourceList(group: string, version: string, serves: Serves): Record<string, unknown> | undefined {
  if (!serves(group)) return undefined;
  const rs = resourcesIn(group, version);
  if (rs.length === 0) return undefined;
  const resources: Array<Record<string, unknown>> = [];
  for (const r of rs) {
    const doc: Record<string, unknown> = {
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
    };
    if (r.shortNames) doc.shortNames = r.shortNames;
    if (r.categories) doc.categories = r.categories;
    resources.push(doc);
    for (const sub of r.subresources ?? []) {
      const k = subKind(r, sub);
      const s: Record<string, unknown> = {
        name: `${r.plural}/${sub}`,
        singularName: "",
        namespaced: r.namespaced,
        kind: k.kind,
        verbs: [...SUB_VERBS[sub]],
      };
      if (sub === "scale") {
        s.group = k.group;
        s.version = k.version;
      }
      resources.push(s);
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources,
  };
}

function aggregatedResource(r: Served): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    resource: r.plural,
    responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: r.namespaced ? "Namespaced" : "Cluster",
    singularResource: r.singular,
    verbs: r.verbs,
  };
  if (r.shortNames) doc.shortNames = r.shortNames;
  if (r.categories) doc.categories = r.categories;
  if (r.subresources?.length) {
    doc.subresources = r.subresources.map((sub) => ({
      subresource: sub,
      responseKind: subKind(r, sub),
      verbs: [...SUB_VERBS[sub]],
    }));
  }
  return doc;
}

/** APIGroupDiscoveryList for /api (legacy: true) or /apis. */
export function aggregatedDiscovery(legacy: boolean, serves: Serves): Record<string, unknown> {
  const entries = legacy ? [["", ["v1"]] as [string, string[]]] : groups(serves);
  const items = entries.map(([g, versions]) => ({
    metadata: legacy ? { creationTimestamp: null } : { name: g, creationTimestamp: null },
    versions: versions.map((v) => ({
      version: v,
      resources: resourcesIn(g, v).map(aggregatedResource),
      freshness: "Current",
    })),
  }));
  return { kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {}, items };
}
