// `vc doctor`: every check over one host snapshot, findings sorted; the snapshot is read by gather.ts.
import { crashingPods, pendingPods } from "./pods.js";
import { metricsApiService, metricsRbac } from "./metrics.js";
import { gateways, sidecars } from "./mesh.js";
import { livenessProbe, persistence } from "./controlplane.js";
import { syncerRbac } from "./syncer.js";
import { servedKinds } from "./kinds.js";
import { gatewayCertificates } from "./certificates.js";
import type { Check, Finding, HostSnapshot } from "./types.js";

export type { Finding, HostSnapshot } from "./types.js";

export const CHECKS: ReadonlyArray<[string, Check]> = [
  ["pods pending", pendingPods],
  ["pods crashing", crashingPods],
  ["metrics API service", metricsApiService],
  ["metrics RBAC", metricsRbac],
  ["syncer RBAC", syncerRbac],
  ["mesh sidecars", sidecars],
  ["mesh gateways", gateways],
  ["gateway certificates", gatewayCertificates],
  ["persistence", persistence],
  ["liveness probe", livenessProbe],
  ["served kinds", servedKinds],
];

/** Runs every check; findings sorted by severity (errors first), then object and check. Pure. */
export function diagnose(s: HostSnapshot): Finding[] {
  const all = CHECKS.flatMap(([, check]) => check(s));
  const rank = (f: Finding) => (f.severity === "error" ? 0 : 1);
  return all.sort((a, b) => rank(a) - rank(b) || a.object.localeCompare(b.object) || a.check.localeCompare(b.check) || a.message.localeCompare(b.message));
}
