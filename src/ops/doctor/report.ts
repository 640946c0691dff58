// One virtual cluster's doctor report as data: what `vc doctor -o json` prints and the fleet page shows on request.
import type { ClusterRef } from "../cluster-ref.js";
import type { Host } from "../host.js";
import { NOT_VISIBLE, NotVisibleError } from "../visible.js";
import { remarks } from "./context.js";
import { gatherSnapshot } from "./gather.js";
import { countBySeverity, diagnose, type Finding } from "./index.js";
import { meshObjectsOf } from "./mesh-sync.js";

export interface DoctorReport {
  cluster: string;
  namespace: string;
  problems: number;
  counts: Record<Finding["severity"], number>;
  findings: Finding[];
  remarks?: string[];
  /** What could not be read, by check. */
  notChecked?: Record<string, string>;
  /** Set when the caller may not read the cluster's namespace: nothing was checked. */
  notVisible?: string;
}

/** Reads the host for `cluster` and diagnoses it; a namespace the caller may not read is said, not thrown. */
export async function doctorReport(
  host: Host,
  cluster: ClusterRef,
  opts: { virtualServer?: string } = {},
): Promise<DoctorReport> {
  const { name, namespace } = cluster;
  const snapshot = await gatherSnapshot(host, name, namespace, cluster.values, {
    ...(cluster.rendered ? { rendered: meshObjectsOf(cluster.rendered) } : {}),
    ...(cluster.valuesErrors ? { valuesErrors: cluster.valuesErrors } : {}),
    ...(opts.virtualServer ? { virtualServer: opts.virtualServer } : {}),
  }).catch((err: unknown) => {
    if (err instanceof NotVisibleError) return undefined;
    throw err;
  });
  if (!snapshot)
    return {
      cluster: name,
      namespace,
      problems: 0,
      counts: countBySeverity([]),
      findings: [],
      notVisible: NOT_VISIBLE,
    };
  const findings = diagnose(snapshot);
  const counts = countBySeverity(findings);
  return {
    cluster: name,
    namespace,
    problems: counts.error + counts.warning,
    counts,
    remarks: remarks(snapshot, cluster.found ? cluster.valuesNote : undefined),
    findings,
    notChecked: snapshot.unreadable ?? {},
  };
}
