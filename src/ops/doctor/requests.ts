// Doctor check of resource requests: an autoscaler shows `<unknown>` for pods whose containers request no CPU or
// memory.
import { finding } from "./coverage.js";
import { configOf, metricsIntegrationEnabled, syncedPods } from "./facts.js";
import { podRef, type Check, type Finding, type HostSnapshot } from "./types.js";

/** Whether some metrics source serves the virtual cluster: the integration or its built-in metrics server. */
function metricsServed(s: HostSnapshot): boolean {
  const values = configOf(s);
  return metricsIntegrationEnabled(s) || (values?.deploy.metricsServer.enabled ?? false);
}

export const podRequests: Check = (s) => {
  if (!metricsServed(s)) return [];
  const out: Finding[] = [];
  for (const pod of syncedPods(s)) {
    if (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") continue;
    const lacking = (pod.spec?.containers ?? []).flatMap((c) => {
      const missing = ["cpu", "memory"].filter((r) => !c.resources?.requests?.[r]);
      return missing.length ? [`${c.name} (${missing.join(", ")})`] : [];
    });
    if (lacking.length === 0) continue;
    const message =
      `containers without resource requests: ${lacking.join(", ")}: an autoscaler shows <unknown> ` +
      `for their utilisation`;
    out.push(
      finding("autoscaler-unknown", { check: "pod-requests", severity: "warning", object: podRef(pod), message }),
    );
  }
  return out;
};

/**
 * Autoscalers of the virtual cluster that show `<unknown>`: the pod metrics of the workload each scales, read through
 * the virtual API server; the pods without metrics are named.
 */
export const podMetrics: Check = (s) => {
  if (!s.virtual) return [];
  return s.virtual.autoscalers.map((a) => {
    const object = `HorizontalPodAutoscaler ${a.autoscaler} (virtual cluster)`;
    const without = a.pods.filter((p) => !a.withMetrics.includes(p));
    if (a.error)
      return finding("autoscaler-unknown", {
        check: "pod-metrics",
        severity: "warning",
        object,
        message: `shows <unknown>: ${a.workload}: ${a.error}`,
      });
    if (a.pods.length === 0)
      return finding("autoscaler-unknown", {
        check: "pod-metrics",
        severity: "warning",
        object,
        message: `shows <unknown>: ${a.workload} has no pods to measure`,
      });
    if (without.length > 0) {
      const message =
        `shows <unknown>: ${without.length} of ${a.pods.length} pod(s) of ${a.workload} have no pod ` +
        `metrics (${without.join(", ")})`;
      return finding(
        "autoscaler-unknown",
        { check: "pod-metrics", severity: "warning", object, message },
        "new pods get metrics after the host metrics server's next scrape (1-2 minutes); pods that never do are " +
          "not synced or not running on the host",
      );
    }
    const message =
      `shows <unknown> although every pod of ${a.workload} has pod metrics (${a.pods.join(", ")}): ` +
      `the autoscaler picks them up within 1-2 minutes, unless its pods lack the requests its target is a ` +
      `percentage of`;
    return finding("autoscaler-unknown", { check: "pod-metrics", severity: "note", object, message });
  });
};
