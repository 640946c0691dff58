// Doctor checks of slow APIs: the virtual API server's health probes timing out, and the host's answers vc doctor
// waited for.
import { finding } from "./coverage.js";
import { syncerContainer } from "./facts.js";
import type { Check } from "./types.js";

/** A read of the host slower than this is reported (the client's default timeout for one request is 30 s). */
export const SLOW_READ_MS = 5_000;

const TIMED_OUT = /timeout|timed out|deadline exceeded/i;

/** Health probes of the control plane's pods that time out: its API server answers too slowly. */
export const apiTimeouts: Check = (s) => {
  const pod = new RegExp(`^${s.cluster.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-\\d+$`);
  type Ev = {
    involvedObject?: { kind?: string; name?: string };
    reason?: string;
    message?: string;
    count?: number;
    lastTimestamp?: string;
  };
  const timeouts = (s.events as unknown as Ev[])
    .filter(
      (e) =>
        e.involvedObject?.kind === "Pod" &&
        pod.test(e.involvedObject.name ?? "") &&
        e.reason === "Unhealthy" &&
        TIMED_OUT.test(e.message ?? ""),
    )
    .sort((a, b) => String(a.lastTimestamp ?? "").localeCompare(String(b.lastTimestamp ?? "")));
  if (timeouts.length === 0) return [];
  const count = timeouts.reduce((n, e) => n + (e.count ?? 1), 0);
  const last = timeouts[timeouts.length - 1]!;
  const requests = syncerContainer(s)?.resources?.requests ?? {};
  const now =
    `the control plane requests cpu ${requests.cpu ?? "(none)"} / memory ${requests.memory ?? "(none)"}; ` +
    `suggested requests 200m / 512Mi, larger profile 500m / 1Gi`;
  const message =
    `the virtual API server's health probes time out (${count} time(s); last on pod ` +
    `${last.involvedObject!.name}: ${last.message})`;
  return [
    finding(
      "api-timeouts",
      {
        check: "api-timeouts",
        severity: "warning",
        object: `Pod ${s.namespace}/${last.involvedObject!.name}`,
        message,
      },
      now,
    ),
  ];
};

/** What vc doctor itself saw: host reads that took `SLOW_READ_MS` or more. */
export const hostApiSlow: Check = (s) => {
  if (s.slowReads.length === 0) return [];
  const slowest = [...s.slowReads].sort((a, b) => b.ms - a.ms)[0]!;
  const message =
    `the host API answered slowly while vc doctor read it: ${s.slowReads.length} slow read(s), the ` +
    `slowest GET ${slowest.path} took ${(slowest.ms / 1000).toFixed(1)} s`;
  return [
    finding(
      "api-timeouts",
      { check: "host-api-slow", severity: "warning", object: "host API server", message },
      "the host API server or the network to it is slow: the control planes' syncers wait on it too",
    ),
  ];
};
