// The service hosts a mesh object names (VirtualService hosts, route destinations and mirrors; DestinationRule host)
// and the rule every one of them obeys: translated, kept as an external host, or refused.
import type { KubeObject } from "../kube/object.js";
import type { PathSegment } from "../repo/positions.js";
import { classifyHost, meshNamespaces } from "../translate/names.js";
import type { PlacedFinding } from "./finding.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** One host field of a mesh object: where it is and what it says. */
export interface HostField {
  path: PathSegment[];
  host: string;
  /**
   * `hosts` (what a VirtualService serves) or `destination` (where traffic goes: routes, mirrors, a DestinationRule's
   * host).
   */
  role: "hosts" | "destination";
}

/** Every host field of a VirtualService or DestinationRule, in document order. */
export function hostFields(object: KubeObject): HostField[] {
  const out: HostField[] = [];
  const spec = object.spec;
  if (!isObject(spec)) return out;
  const add = (v: unknown, path: PathSegment[], role: HostField["role"]) =>
    void (typeof v === "string" && out.push({ path, host: v, role }));
  if (object.kind === "DestinationRule") add(spec.host, ["spec", "host"], "destination");
  if (object.kind !== "VirtualService") return out;
  list(spec.hosts).forEach((h, i) => add(h, ["spec", "hosts", i], "hosts"));
  for (const section of ["http", "tcp", "tls"] as const) {
    list(spec[section]).forEach((r, i) => {
      if (!isObject(r)) return;
      list(r.route).forEach(
        (d, j) =>
          isObject(d) &&
          isObject(d.destination) &&
          add(d.destination.host, ["spec", section, i, "route", j, "destination", "host"], "destination"),
      );
      if (isObject(r.mirror)) add(r.mirror.host, ["spec", section, i, "mirror", "host"], "destination");
      list(r.mirrors).forEach(
        (m, j) =>
          isObject(m) &&
          isObject(m.destination) &&
          add(m.destination.host, ["spec", section, i, "mirrors", j, "destination", "host"], "destination"),
      );
    });
  }
  return out;
}

/**
 * Host forms across a cluster's mesh objects: a form vc can neither translate nor keep as an external host (a
 * wildcard over services, another cluster domain, a four-label service name, any other name under cluster.local) is
 * an error; a two-label host that is kept as an external domain because its second label is none of the cluster's
 * namespaces is a warning (it is not read as `svc.ns`).
 */
export function hostFormRules(
  objects: ReadonlyArray<{ file: string; index: number; object: KubeObject }>,
): PlacedFinding[] {
  const out: PlacedFinding[] = [];
  const namespaces = meshNamespaces(objects.map((o) => o.object));
  for (const o of objects) {
    const ns = o.object.metadata.namespace ?? "default";
    for (const f of hostFields(o.object)) {
      const form = classifyHost(f.host, ns, namespaces);
      const at = (severity: "error" | "warning", code: string, message: string) =>
        void out.push({ file: o.file, doc: o.index, path: f.path, at: "value", severity, code, message });
      if (form.form === "refused")
        at("error", "mesh-host", `${o.object.kind} ${ns}/${o.object.metadata.name}: ${form.reason}`);
      else if (
        form.form === "external" &&
        /^[^.*:]+\.[^.]+\.?$/.test(f.host) &&
        !/^\d+$/.test(f.host.split(".")[1] ?? "")
      ) {
        const [svc, second] = f.host.split(".");
        at(
          "warning",
          "external-host",
          `"${f.host}" is kept as an external host: "${second}" is none of this cluster's namespaces ` +
            `(${[...namespaces].sort().join(", ")}); for the service ${svc} of namespace ${second} write ` +
            `${svc}.${second}.svc.cluster.local`,
        );
      }
    }
  }
  return out;
}
