// `vc doctor`: every check over one host snapshot, findings sorted; the snapshot is read by gather.ts, the spec rows
// each check covers are in coverage.ts.
import { pendingPods } from "./pods.js";
import { crashingPods } from "./crash.js";
import { metricsApiService, metricsHostApi, metricsProxy, virtualMetricsApi } from "./metrics.js";
import { metricsRbac, nodeMetrics } from "./metrics-rbac.js";
import { podMetrics, podRequests } from "./requests.js";
import { gateways, sidecars } from "./mesh.js";
import { meshCustomResource } from "./mesh-config.js";
import { meshDestinations, meshHostConflicts } from "./routes.js";
import { meshSubsets, meshSynced } from "./mesh-sync.js";
import { controlPlanePodMissing, controlPlaneReady, controlPlaneServiceAccount } from "./connection.js";
import { apiTimeouts, hostApiSlow } from "./timeouts.js";
import { livenessProbe, persistence, volumeClaims } from "./controlplane.js";
import { syncerRbac } from "./syncer.js";
import { networkPolicies } from "./network.js";
import { servedKinds } from "./kinds.js";
import { gatewayCertificates, gatewaySecrets } from "./certificates.js";
import { duringRestore } from "./context.js";
import { hostReadsBounded } from "./tenant.js";
import { SEVERITIES, type Check, type Finding, type HostSnapshot } from "./types.js";

export type { Finding, HostSnapshot } from "./types.js";

/** One line per check function (several may report under one check id: see coverage.ts). */
export const CHECKS: ReadonlyArray<[string, Check]> = [
  ["pods pending", pendingPods],
  ["pods crashing", crashingPods],
  ["metrics host API", metricsHostApi],
  ["metrics proxy", metricsProxy],
  ["metrics API service", metricsApiService],
  ["virtual metrics API service", virtualMetricsApi],
  ["metrics RBAC", metricsRbac],
  ["node metrics", nodeMetrics],
  ["pod requests", podRequests],
  ["pod metrics", podMetrics],
  ["syncer RBAC", syncerRbac],
  ["control-plane pod", controlPlanePodMissing],
  ["control-plane readiness", controlPlaneReady],
  ["control-plane service account", controlPlaneServiceAccount],
  ["network policies", networkPolicies],
  ["API timeouts", apiTimeouts],
  ["host API slow", hostApiSlow],
  ["mesh custom resource", meshCustomResource],
  ["mesh sidecars", sidecars],
  ["mesh gateways", gateways],
  ["mesh destinations", meshDestinations],
  ["mesh host conflicts", meshHostConflicts],
  ["mesh synced", meshSynced],
  ["mesh subsets", meshSubsets],
  ["gateway certificates", gatewayCertificates],
  ["gateway secrets", gatewaySecrets],
  ["persistence", persistence],
  ["volume claims", volumeClaims],
  ["liveness probe", livenessProbe],
  ["served kinds", servedKinds],
  ["host reads bounded", hostReadsBounded],
];

/** Runs every check; findings sorted by severity (errors, warnings, notes), then object and check. Pure. */
export function diagnose(s: HostSnapshot): Finding[] {
  const all = duringRestore(
    s,
    CHECKS.flatMap(([, check]) => check(s)),
  );
  const rank = (f: Finding) => SEVERITIES.indexOf(f.severity);
  return all.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      a.object.localeCompare(b.object) ||
      a.check.localeCompare(b.check) ||
      a.message.localeCompare(b.message),
  );
}

/** How many findings of each severity. */
export function countBySeverity(findings: readonly Finding[]): Record<Finding["severity"], number> {
  const counts = { error: 0, warning: 0, note: 0 };
  for (const f of findings) counts[f.severity]++;
  return counts;
}

/** The exit code of `vc doctor`: 1 on errors (and on warnings with `strict`), else 0; notes never fail. */
export function doctorExitCode(findings: readonly Finding[], strict = false): 0 | 1 {
  const counts = countBySeverity(findings);
  return counts.error > 0 || (strict && counts.warning > 0) ? 1 : 0;
}
