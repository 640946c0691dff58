// Doctor check of the configuration the control plane runs with: the mesh integration and a manual sync of a mesh kind.
import { meshResourceOf } from "../../model/values.js";
import { names } from "../../render/meta.js";
import { finding } from "./coverage.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

/**
 * The live configuration (the control plane's config Secret) enables the mesh integration and also syncs a mesh kind
 * through `sync.toHost.customResources`; or the repository's values do, which `vc validate` refuses (so they reach a
 * host only by other hands: an older vc, a manual edit), reported at their file and line.
 */
export const meshCustomResource: Check = (s) => [...inRepository(s), ...inLiveConfig(s)];

/** The repository's values with the conflict: vc validate's error (spec section 7), at its file, line and column. */
function inRepository(s: HostSnapshot): Finding[] {
  return (s.valuesErrors ?? [])
    .filter((d) => d.code === "mesh-conflict")
    .map((d) =>
      finding(
        "mesh-custom-resource",
        {
          check: "mesh-custom-resource",
          severity: "error",
          object: `${d.file}:${d.line}:${d.col}`,
          message: d.message.replaceAll("`", ""),
        },
        `remove the entry from clusters/${s.cluster}'s values and use integrations.mesh, then apply ` +
          `(vc apply --cluster ${s.cluster})`,
      ),
    );
}

function inLiveConfig(s: HostSnapshot): Finding[] {
  const live = s.liveValues;
  if (!live?.integrations.mesh.enabled) return [];
  const crs = live.sync.toHost.customResources;
  const secret = names.configSecret(s.cluster);
  return Object.keys(crs)
    .sort()
    .filter((key) => crs[key]?.enabled && meshResourceOf(key) !== undefined)
    .map((key) =>
      finding(
        "mesh-custom-resource",
        {
          check: "mesh-custom-resource",
          severity: "error",
          object: `Secret ${s.namespace}/${secret}`,
          message:
            `the mesh integration is enabled but the mesh custom resource is also set in ` +
            `sync.toHost.customResources: "${key}" (in the configuration the control plane runs with)`,
        },
        `fix clusters/${s.cluster}/values.yaml and apply it (vc apply --cluster ${s.cluster})`,
      ),
    );
}
