// Rules across a cluster's mesh objects: duplicates, host-name collisions, switches that are off, dangling references.
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { hostName, meshNamespaces, parseServiceHost } from "../translate/names.js";
import type { Finding, PlacedFinding } from "./finding.js";
import type { MeshKind } from "./mesh.js";
import { hostFormRules } from "./mesh-hosts.js";

/** A valid mesh object and where it came from. */
export interface PlacedObject {
  file: string;
  index: number;
  object: KubeObject;
}

const SWITCH: Record<MeshKind, "virtualServices" | "destinationRules" | "gateways"> = {
  VirtualService: "virtualServices",
  DestinationRule: "destinationRules",
  Gateway: "gateways",
};

/**
 * Findings across the objects of one cluster. `values` is absent when the values files were invalid;
 * `complete` is false when some mesh document was rejected (then dangling references are not reported:
 * the rejected document may be the one they name).
 */
export function meshRules(
  cluster: string,
  objects: readonly PlacedObject[],
  values?: Values,
  complete = true,
): PlacedFinding[] {
  const { out, at } = collector();
  const byKey = identityRules(cluster, objects, at);
  if (values) switchWarnings(objects, values, at);
  if (complete) referenceWarnings(objects, byKey, at);
  out.push(...hostFormRules(objects));
  return out;
}

/** Reports a finding at a path of a placed object's document. */
export type At = (
  o: PlacedObject,
  path: Finding["path"],
  severity: Finding["severity"],
  code: string,
  message: string,
) => void;

/** A findings list and the function that adds to it. */
export function collector(): { out: PlacedFinding[]; at: At } {
  const out: PlacedFinding[] = [];
  return {
    out,
    at: (o, path, severity, code, message) =>
      void out.push({ file: o.file, doc: o.index, path, at: "key", severity, code, message }),
  };
}

/**
 * Rules of identity among a cluster's objects of one folder (mesh/, certificates/): the same kind/namespace/name
 * twice, and two objects of a kind whose host names collide. Returns the objects by `kind/namespace/name`.
 */
export function identityRules(cluster: string, objects: readonly PlacedObject[], at: At): Map<string, PlacedObject> {
  const byKey = new Map<string, PlacedObject>();
  const byHostName = new Map<string, PlacedObject>();
  for (const o of objects) {
    const { kind, metadata } = o.object;
    const ns = metadata.namespace!;
    const key = `${kind}/${ns}/${metadata.name}`;
    const first = byKey.get(key);
    if (first) {
      for (const [p, q] of [
        [o, first],
        [first, o],
      ] as const) {
        at(
          p,
          ["metadata", "name"],
          "error",
          "duplicate",
          `${kind} ${ns}/${metadata.name} is defined twice (also at ${q.file}, document ${q.index + 1})`,
        );
      }
      continue;
    }
    byKey.set(key, o);
    const host = `${kind}/${hostName(metadata.name, ns, cluster)}`;
    const clash = byHostName.get(host);
    if (clash) {
      const hn = host.slice(kind.length + 1);
      for (const [p, q] of [
        [o, clash],
        [clash, o],
      ] as const) {
        at(
          p,
          ["metadata", "name"],
          "error",
          "host-name-collision",
          `${kind} ${p.object.metadata.namespace}/${p.object.metadata.name} and ` +
            `${q.object.metadata.namespace}/${q.object.metadata.name} (${q.file}) both become "${hn}" on the host: ` +
            `rename one`,
        );
      }
    } else {
      byHostName.set(host, o);
    }
  }
  return byKey;
}

function switchWarnings(objects: readonly PlacedObject[], values: Values, at: At): void {
  const mesh = values.integrations.mesh;
  for (const o of objects) {
    const kind = o.object.kind as MeshKind;
    const what = `${kind} ${o.object.metadata.namespace}/${o.object.metadata.name}`;
    if (!mesh.enabled) {
      at(
        o,
        ["kind"],
        "warning",
        "mesh-disabled",
        `${what} is never applied: the mesh integration is off (set integrations.mesh.enabled: true)`,
      );
    } else if (!mesh.sync.toHost[SWITCH[kind]].enabled) {
      at(
        o,
        ["kind"],
        "warning",
        "mesh-disabled",
        `${what} is never applied: integrations.mesh.sync.toHost.${SWITCH[kind]}.enabled is false`,
      );
    }
  }
}

function referenceWarnings(objects: readonly PlacedObject[], byKey: Map<string, PlacedObject>, at: At): void {
  const subsets = new Map<string, Set<string>>();
  const namespaces = meshNamespaces(objects.map((o) => o.object));
  for (const o of objects) {
    if (o.object.kind !== "DestinationRule") continue;
    const spec = o.object.spec as { host: string; subsets?: Array<{ name: string }> };
    const svc = parseServiceHost(spec.host, o.object.metadata.namespace!, namespaces);
    if (!svc) continue;
    const set = subsets.get(`${svc.namespace}/${svc.service}`) ?? new Set<string>();
    for (const s of spec.subsets ?? []) set.add(s.name);
    subsets.set(`${svc.namespace}/${svc.service}`, set);
  }
  for (const o of objects) {
    if (o.object.kind !== "VirtualService") continue;
    const ns = o.object.metadata.namespace!;
    const spec = o.object.spec as {
      gateways?: string[];
      http?: Array<{ route?: Array<{ destination: { host: string; subset?: string } }> }>;
    };
    (spec.gateways ?? []).forEach((g, i) => {
      if (g === "mesh") return;
      const [gns, gname] = g.includes("/") ? (g.split("/", 2) as [string, string]) : [ns, g];
      if (!byKey.has(`Gateway/${gns}/${gname}`)) {
        at(
          o,
          ["spec", "gateways", i],
          "warning",
          "dangling-reference",
          `gateway "${g}" is not defined in this cluster's mesh manifests (Gateway ${gns}/${gname})`,
        );
      }
    });
    (spec.http ?? []).forEach((h, i) =>
      (h.route ?? []).forEach((r, j) => {
        const subset = r.destination.subset;
        if (subset === undefined) return;
        const svc = parseServiceHost(r.destination.host, ns, namespaces);
        if (!svc) return;
        const known = subsets.get(`${svc.namespace}/${svc.service}`);
        if (!known?.has(subset)) {
          at(
            o,
            ["spec", "http", i, "route", j, "destination", "subset"],
            "warning",
            "dangling-reference",
            known
              ? `subset "${subset}" is not defined in the DestinationRule for ${svc.service}.${svc.namespace}`
              : `subset "${subset}": no DestinationRule in this cluster defines subsets for ` +
                  `${svc.service}.${svc.namespace}`,
          );
        }
      }),
    );
  }
}
