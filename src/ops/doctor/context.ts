// What vc doctor says about the ground it checked on, before its findings: the configuration it went by (the
// repository's values, or the live ones when those are invalid), and a cluster suspended for a restore, whose
// control-plane symptoms are expected then and reported as notes instead of errors.
import { names } from "../../render/meta.js";
import { restorePodName } from "../restore.js";
import { isControlPlane } from "./facts.js";
import type { Finding, HostSnapshot } from "./types.js";

/**
 * Lines printed under the headline (and as `remarks` in -o json|yaml). `valuesNote`: why the repository's values were
 * not used.
 */
export function remarks(
  s: Pick<HostSnapshot, "cluster" | "values" | "liveValues" | "suspendedBy">,
  valuesNote?: string,
): string[] {
  const out: string[] = [];
  if (s.suspendedBy !== undefined) {
    out.push(
      `suspended for a restore (${s.suspendedBy || "no reason given"}): reconciliation is paused and the control ` +
        `plane is being replaced; its symptoms are expected until the restore ends and are reported as notes`,
    );
  }
  if (valuesNote && !s.values) {
    const secret = names.configSecret(s.cluster);
    out.push(
      s.liveValues
        ? `the repository's values of clusters/${s.cluster} are invalid (${valuesNote}): checked against the ` +
            `configuration the control plane runs with (Secret ${secret}) instead`
        : `the repository's values of clusters/${s.cluster} are invalid (${valuesNote}) and the live configuration ` +
            `(Secret ${secret}) could not be read: checks that depend on values judge from the host's objects alone`,
    );
  }
  return out;
}

/** Whether a finding is about the control plane's own objects (its StatefulSet, pods, claims, the restore pod). */
function aboutControlPlane(s: HostSnapshot, f: Finding): boolean {
  const ns = s.namespace;
  if (f.object === `StatefulSet ${ns}/${s.cluster}` || f.object === `Pod ${ns}/${restorePodName(s.cluster)}`)
    return true;
  if (f.object.startsWith(`PersistentVolumeClaim ${ns}/`) && f.object.endsWith(`-${names.statefulSet(s.cluster)}-0`))
    return true;
  if (!f.object.startsWith(`Pod ${ns}/`)) return false;
  const pod = s.pods.find((p) => `Pod ${ns}/${p.metadata.name}` === f.object);
  return !!pod && isControlPlane(pod.metadata.labels, s.cluster);
}

/** While a restore holds the cluster, control-plane errors and warnings are expected: they become notes saying so. */
export function duringRestore(s: HostSnapshot, findings: Finding[]): Finding[] {
  if (s.suspendedBy === undefined) return findings;
  return findings.map((f) =>
    f.severity !== "note" && aboutControlPlane(s, f)
      ? { ...f, severity: "note", message: `expected during the restore: ${f.message}` }
      : f,
  );
}
