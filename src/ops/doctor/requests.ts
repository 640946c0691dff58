// Doctor check of resource requests: an autoscaler shows `<unknown>` for pods whose containers request no CPU or memory.
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
    const message = `containers without resource requests: ${lacking.join(", ")}: an autoscaler shows <unknown> for their utilisation`;
    out.push(finding("autoscaler-unknown", { check: "pod-requests", severity: "warning", object: podRef(pod), message }));
  }
  return out;
};
