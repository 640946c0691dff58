// Doctor checks that the mesh objects the repository renders for the cluster are in effect on the host: each one
// present under its translated name with the same spec, and each route's subset defined by a DestinationRule there.
import { isDeepStrictEqual } from "node:util";
import type { KubeObject } from "../../kube/object.js";
import { MESH_API_VERSION } from "../../kube/resources.js";
import { ANNOTATIONS } from "../../translate/keys.js";
import { finding } from "./coverage.js";
import { serviceRef, snapshotMeshNamespaces } from "./routes.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The repository's objects these checks compare: the mesh kinds. */
export function meshObjectsOf(objects: readonly KubeObject[]): KubeObject[] {
  return objects.filter((o) => o.apiVersion === MESH_API_VERSION);
}

/** The first path at which two JSON values differ (`spec.http[0].route`), or undefined when equal. */
function firstDifference(want: unknown, have: unknown, path = "spec"): string | undefined {
  if (isDeepStrictEqual(want, have)) return undefined;
  if (Array.isArray(want) && Array.isArray(have)) {
    if (want.length !== have.length)
      return `${path} (${want.length} item(s) in the repository, ${have.length} on the host)`;
    for (let i = 0; i < want.length; i++) {
      const d = firstDifference(want[i], have[i], `${path}[${i}]`);
      if (d) return d;
    }
  }
  if (isObject(want) && isObject(have)) {
    for (const k of [...new Set([...Object.keys(want), ...Object.keys(have)])].sort()) {
      const d = firstDifference(want[k], have[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return path;
}

const sourceOf = (o: KubeObject) => o.metadata.annotations?.[ANNOTATIONS.sourceFile];

/** Each mesh object the repository renders for the cluster is on the host, with the repository's spec. */
export const meshSynced: Check = (s) => {
  if (!s.rendered || s.unreadable?.mesh || s.unreadable?.gateways) return [];
  const live = new Map(
    [...s.virtualServices, ...s.destinationRules, ...s.gateways].map((o) => [
      `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`,
      o,
    ]),
  );
  const out: Finding[] = [];
  for (const want of meshObjectsOf(s.rendered)) {
    const ns = want.metadata.namespace ?? s.namespace;
    const object = `${want.kind} ${ns}/${want.metadata.name}`;
    const from = sourceOf(want) ? ` (from ${sourceOf(want)})` : "";
    const have = live.get(`${want.kind}/${ns}/${want.metadata.name}`);
    if (!have) {
      const message =
        `the repository's ${want.kind}${from} is not on the host under its translated name ` +
        `${want.metadata.name}: the rule is not applied`;
      out.push(
        finding(
          "mesh-not-effective",
          { check: "mesh-not-synced", severity: "error", object, message },
          `apply the cluster (vc apply --cluster ${s.cluster}); vc diff shows what is missing`,
        ),
      );
      continue;
    }
    const diff = firstDifference(want.spec, have.spec);
    if (diff) {
      const message =
        `the host's ${want.kind} differs from the repository's${from} at ${diff}: the mesh applies ` + `the host's`;
      out.push(
        finding(
          "mesh-not-effective",
          { check: "mesh-not-synced", severity: "error", object, message },
          `vc diff --cluster ${s.cluster} shows the difference; vc apply --cluster ${s.cluster} restores the ` +
            `repository's`,
        ),
      );
    }
  }
  return out;
};

/** Subsets each DestinationRule on the host defines, by the Service (or external host) its `host` names. */
function subsetsByHost(s: HostSnapshot): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const namespaces = snapshotMeshNamespaces(s);
  for (const dr of s.destinationRules) {
    const spec = isObject(dr.spec) ? dr.spec : {};
    if (typeof spec.host !== "string") continue;
    const key = serviceRef(spec.host, dr.metadata.namespace ?? s.namespace, namespaces) ?? spec.host;
    const names = out.get(key) ?? new Set<string>();
    for (const sub of list(spec.subsets)) if (isObject(sub) && typeof sub.name === "string") names.add(sub.name);
    out.set(key, names);
  }
  return out;
}

/** Each route destination that names a subset finds it in a DestinationRule for its host on the host cluster. */
export const meshSubsets: Check = (s) => {
  if (s.unreadable?.mesh) return [];
  const defined = subsetsByHost(s);
  const namespaces = snapshotMeshNamespaces(s);
  const out: Finding[] = [];
  for (const vs of s.virtualServices) {
    const ns = vs.metadata.namespace ?? s.namespace;
    const spec = isObject(vs.spec) ? vs.spec : {};
    const seen = new Set<string>();
    for (const section of ["http", "tcp", "tls"]) {
      for (const route of list(spec[section])) {
        for (const r of isObject(route) ? list(route.route) : []) {
          const d = isObject(r) && isObject(r.destination) ? r.destination : undefined;
          if (!d || typeof d.host !== "string" || typeof d.subset !== "string") continue;
          const key = serviceRef(d.host, ns, namespaces) ?? d.host;
          if (defined.get(key)?.has(d.subset) || seen.has(`${key}/${d.subset}`)) continue;
          seen.add(`${key}/${d.subset}`);
          const rule = defined.has(key)
            ? `the DestinationRule for ${d.host} on the host defines no subset ${d.subset}`
            : `no DestinationRule for ${d.host} exists on the host`;
          const message =
            `route to ${d.host} subset ${d.subset}: ${rule}; the mesh rejects the route (no healthy ` + `upstream)`;
          out.push(
            finding(
              "mesh-not-effective",
              { check: "mesh-subset", severity: "error", object: `VirtualService ${ns}/${vs.metadata.name}`, message },
              "add the subset to the service's DestinationRule in the virtual cluster (or remove it from the " +
                "route), then apply",
            ),
          );
        }
      }
    }
  }
  return out;
};
