// Doctor checks of crashing pods (spec section 3): CrashLoopBackOff and its cause, high restart counts, OOMKilled.
import { finding, HIGH_RESTARTS, type RowKey } from "./coverage.js";
import { asPod, eventsAbout, type ContainerStatus, type PodLike } from "../../health/pod-causes.js";
import { podRef, type Check, type Finding, type HostSnapshot } from "./types.js";

const NODE_PRESSURE = /pressure|low on resource|Evicted/i;
const LIVENESS_FAILED = /Liveness probe failed|failed liveness probe/i;

function oomKilled(cs: ContainerStatus): boolean {
  return cs.lastState?.terminated?.reason === "OOMKilled" || cs.state?.terminated?.reason === "OOMKilled";
}

function lastTermination(cs: ContainerStatus): string {
  const t = cs.lastState?.terminated ?? cs.state?.terminated;
  if (!t) return "no termination recorded";
  return (
    `last terminated ` + `${t.reason ?? "with an error"}${t.exitCode !== undefined ? ` (exit code ${t.exitCode})` : ""}`
  );
}

/** Why a container loops: memory, node pressure, the liveness probe, else the application; with the evidence. */
function crashCause(s: HostSnapshot, pod: PodLike, cs: ContainerStatus): { row: RowKey; detail: string } {
  if (oomKilled(cs)) return { row: "crash-memory", detail: "last terminated OOMKilled" };
  const events = eventsAbout(s, "Pod", pod.metadata.name);
  const pressure = events.filter((e) => NODE_PRESSURE.test(`${e.reason} ${e.message}`)).pop();
  if (pressure) return { row: "crash-node-pressure", detail: `node pressure: ${pressure.reason}: ${pressure.message}` };
  const liveness = events.filter((e) => LIVENESS_FAILED.test(e.message)).pop();
  if (liveness) return { row: "crash-liveness", detail: `killed by its liveness probe: ${liveness.message}` };
  return { row: "crash-application", detail: `application error, ${lastTermination(cs)}` };
}

function memoryLimit(pod: PodLike, container: string, init = false): string | undefined {
  const limit = (init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === container)?.resources
    ?.limits?.memory;
  return limit ? `the memory limit is now ${limit}` : undefined;
}

export const crashingPods: Check = (s) => {
  const out: Finding[] = [];
  for (const o of s.pods) {
    const pod = asPod(o);
    // Init containers loop and run out of memory too: the pod then never starts its containers.
    const statuses = [
      ...(pod.status?.initContainerStatuses ?? []).map((cs) => ({ cs, init: true })),
      ...(pod.status?.containerStatuses ?? []).map((cs) => ({ cs, init: false })),
    ];
    for (const { cs, init } of statuses) {
      const restarts = cs.restartCount ?? 0;
      const object = podRef(pod);
      const what = `${init ? "init container" : "container"} ${cs.name}`;
      if (cs.state?.waiting?.reason === "CrashLoopBackOff") {
        const { row, detail } = crashCause(s, pod, cs);
        const message = `${what} in CrashLoopBackOff after ${restarts} restarts, ${detail}`;
        out.push(
          finding(
            row,
            { check: "crash-loop", severity: "error", object, message },
            row === "crash-memory" ? memoryLimit(pod, cs.name, init) : undefined,
          ),
        );
      } else if (oomKilled(cs)) {
        out.push(
          finding(
            "oom-killed",
            {
              check: "oom-killed",
              severity: "warning",
              object,
              message: `${what} was OOMKilled (${restarts} restarts)`,
            },
            memoryLimit(pod, cs.name, init),
          ),
        );
      } else if (restarts >= HIGH_RESTARTS) {
        out.push(
          finding("high-restarts", {
            check: "high-restarts",
            severity: "warning",
            object,
            message: `${what} restarted ${restarts} times, ${lastTermination(cs)}`,
          }),
        );
      }
    }
  }
  return out;
};
